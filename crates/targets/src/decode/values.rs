//! Decoding the values of one template's fields: its opcode, node path,
//! bounds, steps and enum values, with the placeholders each may use.

use super::access::{integer, scalar, seq, string, Result};
use crate::error::InFile;
use crate::model::{Bound, Per, Steps};
use crate::{opcode, placeholder};
use lever_engine::resource::Opcode;
use lever_yaml::{Node, Value};

/// Check that a template string only uses placeholders this template has.
pub(super) fn check_placeholders(
    d: &InFile,
    node: &Node,
    field: &str,
    text: &str,
    per: Per,
    has_index: bool,
) -> Result<()> {
    placeholder::check(text, per, has_index).map_err(|m| d.err(node.pos, field, m))
}

/// An absolute kernel path, possibly with placeholders.
pub(super) fn node_path(
    d: &InFile,
    node: &Node,
    field: &str,
    per: Per,
    has_index: bool,
) -> Result<String> {
    let text = string(d, node, field)?;
    if !text.starts_with('/')
        || text.split('/').any(|c| c == "..")
        || text.contains(char::is_whitespace)
    {
        return Err(d.err(
            node.pos,
            field,
            format!("`{text}` is not an absolute kernel path (such as /sys/..., /proc/..., /dev/...) without `..` or spaces"),
        ));
    }
    check_placeholders(d, node, field, &text, per, has_index)?;
    Ok(text)
}

/// `300000`, `-1`, `/path`, `/path - 1`, `/path + 2`.
pub(super) fn bound(
    d: &InFile,
    node: &Node,
    field: &str,
    per: Per,
    has_index: bool,
) -> Result<Bound> {
    let text = scalar(d, node, field, "an integer or a node path")?;
    if let Some(v) = lever_text::parse_int(text) {
        return Ok(Bound::Value(v));
    }
    if !text.starts_with('/') {
        return Err(d.err(
            node.pos,
            field,
            format!("expected an integer or a node path (starting with /), found `{text}`"),
        ));
    }
    let (path, offset) = match text.rsplit_once([' ']) {
        Some((head, num)) => {
            let head = head.trim_end();
            let (path, sign) = if let Some(p) = head.strip_suffix('-') {
                (p, -1)
            } else if let Some(p) = head.strip_suffix('+') {
                (p, 1)
            } else {
                return Err(d.err(
                    node.pos,
                    field,
                    format!("`{text}`: expected `PATH`, `PATH - N` or `PATH + N`"),
                ));
            };
            let n = lever_text::parse_int(num)
                .filter(|n| *n >= 0)
                .ok_or_else(|| {
                    d.err(
                        node.pos,
                        field,
                        format!("`{text}`: expected `PATH`, `PATH - N` or `PATH + N`"),
                    )
                })?;
            (path.trim_end(), sign * n)
        }
        None => (text, 0),
    };
    let path_node = Node {
        pos: node.pos,
        value: Value::Scalar {
            text: path.to_string(),
            plain: true,
        },
    };
    let path = node_path(d, &path_node, field, per, has_index)?;
    Ok(Bound::Node { path, offset })
}

pub(super) fn template_opcode(
    d: &InFile,
    node: &Node,
    field: &str,
    per: Per,
    has_index: bool,
) -> Result<Opcode> {
    let text = scalar(d, node, field, "an opcode")?;
    let wide = lever_text::parse_int(text).ok_or_else(|| {
        d.err(
            node.pos,
            field,
            format!("`{text}` is not a number (write opcodes in hex, such as 0x44008000)"),
        )
    })?;
    let op = u32::try_from(wide)
        .map_err(|_| d.err(node.pos, field, format!("`{text}` does not fit in 32 bits")))?;
    if let Some(why) = opcode::check(op) {
        return Err(d.err(node.pos, field, why));
    }
    let (mask, what) = match per {
        Per::Cluster => (opcode::CLUSTER_MASK, "bits 12..8 (the cluster id) must be 0 in a per: cluster template; expansion fills them from each cluster's id"),
        Per::Cpu => (opcode::CPU_MASK, "bits 12..4 (the CPU number) must be 0 in a per: cpu template; expansion fills them"),
        Per::None => (0, ""),
    };
    if op & mask != 0 {
        return Err(d.err(node.pos, field, format!("opcode 0x{op:08X}: {what}")));
    }
    if has_index && op & opcode::INDEX_MASK != 0 {
        return Err(d.err(
            node.pos,
            field,
            format!("opcode 0x{op:08X}: bits 3..0 (the sub-index) must be 0 when `index` is set; expansion fills them"),
        ));
    }
    Ok(Opcode(op))
}

pub(super) fn enum_values(d: &InFile, node: &Node, field: &str) -> Result<Vec<String>> {
    let items = seq(d, node, field)?;
    if items.is_empty() {
        return Err(d.err(node.pos, field, "an enum needs at least one value"));
    }
    let mut out: Vec<String> = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let f = format!("{field}[{i}]");
        let v = string(d, item, &f)?;
        if v.is_empty() || v.contains(char::is_whitespace) {
            return Err(d.err(item.pos, f, format!("`{v}` is not a single word")));
        }
        if out.contains(&v) {
            return Err(d.err(item.pos, f, format!("`{v}` is listed twice")));
        }
        out.push(v);
    }
    Ok(out)
}

pub(super) fn steps(
    d: &InFile,
    node: &Node,
    field: &str,
    per: Per,
    has_index: bool,
) -> Result<Steps> {
    match &node.value {
        Value::Seq(items) => {
            if items.is_empty() {
                return Err(d.err(node.pos, field, "the list of steps is empty"));
            }
            let mut list = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                list.push(integer(d, item, &format!("{field}[{i}]"))?);
            }
            list.sort_unstable();
            list.dedup();
            Ok(Steps::List(list))
        }
        _ => Ok(Steps::Node(node_path(d, node, field, per, has_index)?)),
    }
}
