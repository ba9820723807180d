//! The STATUS and EXPLAIN documents, whole (`Core::status`,
//! `Core::explain`) or produced piece by piece as their client reads
//! (`Core::open_doc`, `Core::doc_next`): the event loop never holds more
//! of a document than about one frame, whatever its size.
//!
//! What a client other than root sees: in STATUS its own requests (those
//! of its connection and its uid's detached ones) and every resource with
//! its winner; in EXPLAIN its own votes, the winning vote and the
//! profile's, the other clients' votes only counted (`other_votes`). Both
//! stay small whatever the other clients hold.

use super::{expires_in_ms, spec_info, Client, Core};
use lever_engine::{Opcode, RequestId, ResourceIndex, ResourceSpec};
use lever_protocol::{Explain, Request as Wire, Status, Vote};
use serde::Serialize;
use std::time::Duration;

/// A STATUS or EXPLAIN being produced: its text up to the list it ends
/// with (`requests` or `votes`), and the ids of that list, each rendered
/// when its turn comes. A request or vote that ended meanwhile is left
/// out; the head (resources, counts) is the state when it was opened.
#[derive(Debug)]
pub struct Doc {
    /// Not handed out yet: the document up to and including `"LIST":[`.
    head: Option<String>,
    items: Items,
    next: usize,
    /// An item has been written (the next one needs a comma).
    written: bool,
}

#[derive(Debug)]
enum Items {
    Requests(Vec<RequestId>),
    Votes {
        idx: ResourceIndex,
        votes: Vec<(RequestId, i64)>,
    },
}

impl Doc {
    /// Bytes this document holds besides the text handed out: its head
    /// until taken and its list of ids (charged to the reply budgets).
    pub fn size(&self) -> usize {
        let items = match &self.items {
            Items::Requests(ids) => ids.capacity() * std::mem::size_of::<RequestId>(),
            Items::Votes { votes, .. } => {
                votes.capacity() * std::mem::size_of::<(RequestId, i64)>()
            }
        };
        self.head.as_ref().map_or(0, String::capacity) + items
    }
}

/// The votes an EXPLAIN lists, strongest first, with their values.
type Ballot = Vec<(RequestId, i64)>;

/// `doc` as JSON text without its `list` key, ready for that list's items:
/// `{...,"list":[`.
fn head_text<T: Serialize>(doc: &T, list: &str) -> Result<String, serde_json::Error> {
    let mut value = serde_json::to_value(doc)?;
    if let Some(map) = value.as_object_mut() {
        map.remove(list);
    }
    let mut text = serde_json::to_string(&value)?;
    text.pop(); // the closing brace
    if !text.ends_with('{') {
        text.push(',');
    }
    text.push('"');
    text.push_str(list);
    text.push_str("\":[");
    Ok(text)
}

impl Core {
    /// The status document: every resource and the requests this client may
    /// see (all of them for root).
    pub fn status(&self, client: &Client, now: Duration) -> Status {
        let mut doc = self.status_head(client);
        doc.requests = self
            .visible(client)
            .into_iter()
            .filter_map(|id| self.request_entry(client, id, now))
            .collect();
        doc
    }

    /// Everything about one resource: its spec, value, original, and the
    /// live votes `client` may see (every one for root; for anyone else its
    /// own, the winner and the profile's, the rest counted in
    /// `other_votes`).
    pub fn explain(&self, client: &Client, resource: &str, now: Duration) -> Option<Explain> {
        let (mut doc, idx, votes) = self.explain_head(client, resource)?;
        let spec = self.engine.spec(idx)?;
        doc.votes = votes
            .into_iter()
            .filter_map(|(id, value)| self.vote_entry(client, spec, id, value, now))
            .collect();
        Some(doc)
    }

    /// Start the document a STATUS or EXPLAIN asks for: its head is built
    /// now, its list as [`Core::doc_next`] is called. `None` for any other
    /// request, an unknown resource (`Core::handle` answers both) or a head
    /// that cannot be encoded (`Core::handle` says why).
    pub fn open_doc(&self, client: &Client, request: &Wire) -> Option<Doc> {
        let (head, items) = match request {
            Wire::Status => {
                let head = head_text(&self.status_head(client), "requests");
                (head, Items::Requests(self.visible(client)))
            }
            Wire::Explain { resource } => {
                let (doc, idx, votes) = self.explain_head(client, resource)?;
                (head_text(&doc, "votes"), Items::Votes { idx, votes })
            }
            _ => return None,
        };
        Some(Doc {
            head: Some(head.ok()?),
            items,
            next: 0,
            written: false,
        })
    }

    /// Append the next part of `doc` to `out` (JSON text) until `out`
    /// holds at least `want` bytes or the document is complete; returns
    /// whether it is.
    pub fn doc_next(
        &self,
        client: &Client,
        doc: &mut Doc,
        out: &mut Vec<u8>,
        want: usize,
        now: Duration,
    ) -> bool {
        if let Some(head) = doc.head.take() {
            out.extend_from_slice(head.as_bytes());
        }
        while out.len() < want {
            let start = out.len();
            if doc.written {
                out.push(b',');
            }
            let wrote = match &doc.items {
                Items::Requests(ids) => {
                    let Some(&id) = ids.get(doc.next) else {
                        out.truncate(start);
                        out.extend_from_slice(b"]}");
                        return true;
                    };
                    self.request_entry(client, id, now)
                        .is_some_and(|r| serde_json::to_writer(&mut *out, &r).is_ok())
                }
                Items::Votes { idx, votes } => {
                    let Some(&(id, value)) = votes.get(doc.next) else {
                        out.truncate(start);
                        out.extend_from_slice(b"]}");
                        return true;
                    };
                    self.engine
                        .spec(*idx)
                        .and_then(|spec| self.vote_entry(client, spec, id, value, now))
                        .is_some_and(|v| serde_json::to_writer(&mut *out, &v).is_ok())
                }
            };
            doc.next += 1;
            if wrote {
                doc.written = true;
            } else {
                out.truncate(start);
            }
        }
        false
    }

    /// STATUS without its requests.
    fn status_head(&self, client: &Client) -> Status {
        Status {
            protocol: lever_protocol::VERSION,
            target: self.target.name.clone(),
            source: self.target.source.clone(),
            root: self.fs.root().display().to_string(),
            live_requests: self.engine.live_count(),
            requests: Vec::new(),
            resources: self
                .engine
                .specs()
                .enumerate()
                .map(|(i, spec)| self.resource_state(client, i, spec))
                .collect(),
            task_rules: self
                .has_task_rules()
                .then(|| self.task_rules_unavailable())
                .flatten(),
            unrestored: self
                .journal
                .unrestored()
                .into_iter()
                .map(|u| lever_protocol::reply::Unrestored {
                    node: u.node,
                    original: u.original,
                    error: u.error,
                })
                .collect(),
            app_detection: self.tasks_app_detection(),
            profile: self.profile_status(),
        }
    }

    /// A request as STATUS lists it, if it is live and `client` may see it.
    fn request_entry(
        &self,
        client: &Client,
        id: RequestId,
        now: Duration,
    ) -> Option<lever_protocol::RequestInfo> {
        if !self.owns(client, id) {
            return None;
        }
        let r = self.engine.request(id)?;
        Some(self.request_info(r, self.meta.get(&id)?, now))
    }

    /// EXPLAIN without its votes, the resource's index, and the votes it
    /// lists (strongest first) with their values.
    fn explain_head(
        &self,
        client: &Client,
        resource: &str,
    ) -> Option<(Explain, ResourceIndex, Ballot)> {
        let idx = resource
            .parse::<Opcode>()
            .ok()
            .and_then(|o| self.engine.index_of(o))
            .or_else(|| self.engine.specs().position(|s| s.name == resource))?;
        let spec = self.engine.spec(idx)?;
        // Root sees every vote; anyone else its own, the winner (the first:
        // strongest first) and the profile's, the others only counted.
        // Its own requests, sorted: a search per vote, no hashing.
        let root = client.id.uid == 0;
        let own = if root {
            Vec::new()
        } else {
            self.visible(client)
        };
        let mut votes = Vec::new();
        let mut others = 0;
        for (n, (id, value, class)) in self.engine.votes(idx).enumerate() {
            let listed = root
                || n == 0
                || class == lever_engine::PriorityClass::Profile
                || own.binary_search(&id).is_ok();
            if listed {
                votes.push((id, value));
            } else {
                others += 1;
            }
        }
        let rule = match spec.aggregation {
            lever_engine::Aggregation::Max => {
                "the highest value wins, whatever the priority class (a profile's vote too)"
            }
            lever_engine::Aggregation::Min => {
                "the lowest value wins, whatever the priority class (a profile's vote too)"
            }
            lever_engine::Aggregation::Newest => {
                "the newest vote of the highest priority class wins"
            }
            lever_engine::Aggregation::Oldest => {
                "the oldest live vote of the highest priority class wins"
            }
        };
        let pair = spec
            .partner()
            .and_then(|p| self.engine.index_of(p))
            .and_then(|i| self.engine.spec(i))
            .map(|s| s.name.clone());
        let doc = Explain {
            resource: self.resource_state(client, idx, spec),
            spec: spec_info(spec),
            rule: rule.to_string(),
            pair,
            applied: self.engine.applied(idx).map(|l| spec.render(l)),
            cause: Some(self.cause(client, idx)),
            votes: Vec::new(),
            other_votes: others,
        };
        Some((doc, idx, votes))
    }

    /// A vote as EXPLAIN lists it, if its request is still live.
    fn vote_entry(
        &self,
        client: &Client,
        spec: &ResourceSpec,
        id: RequestId,
        value: i64,
        now: Duration,
    ) -> Option<Vote> {
        Some(Vote {
            handle: self.holder(client, id),
            value,
            shown: spec.render(value),
            priority: self.vote_priority(id)?,
            expires_in_ms: expires_in_ms(self.engine.request(id)?.deadline, now),
            usecase: self.usecase_of(client, id),
        })
    }
}
