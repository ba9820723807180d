//! `--plot`: the SVG is well-formed XML with one line per thread and
//! labelled axes (on the real cyclictest 2.40 capture of fixtures/).
use lever_latency::import::import_file;
use lever_testkit::fixture_path;
use quick_xml::events::Event;

/// (elements by name, `class="thread"` paths, all text).
fn parse(svg: &str) -> (Vec<String>, usize, String) {
    let mut reader = quick_xml::Reader::from_str(svg);
    let (mut names, mut threads, mut text) = (Vec::new(), 0, String::new());
    loop {
        match reader.read_event().expect("well-formed XML") {
            Event::Start(e) | Event::Empty(e) => {
                let name = String::from_utf8(e.name().as_ref().to_vec()).unwrap();
                let class = e
                    .try_get_attribute("class")
                    .unwrap()
                    .map(|a| String::from_utf8_lossy(&a.value).into_owned());
                if name == "path" && class.as_deref() == Some("thread") {
                    threads += 1;
                    let d = e.try_get_attribute("d").unwrap().unwrap();
                    assert!(d.value.starts_with(b"M"), "a path starts with a move");
                }
                names.push(name);
            }
            Event::Text(t) => text += &t.decode().unwrap(),
            Event::Eof => break,
            _ => {}
        }
    }
    (names, threads, text)
}

#[test]
fn one_line_per_thread_and_labelled_axes() {
    let r = import_file(&fixture_path(
        env!("CARGO_MANIFEST_DIR"),
        "cyclictest-2.40-t2-h60-spike40.txt",
    ))
    .unwrap();
    assert_eq!(r.threads.len(), 2);
    let svg = lever_latency::plot::svg(&r, "cyclictest <2.40> & lever").unwrap();
    let (names, threads, text) = parse(&svg);
    assert_eq!(names[0], "svg");
    assert_eq!(threads, 2);
    assert!(text.contains("latency (µs)"), "{text}");
    assert!(text.contains("samples (log scale)"), "{text}");
    assert!(text.contains("1e0") && text.contains("1e3"), "{text}");
    assert!(text.contains("T0") && text.contains("T1"), "{text}");
    // The title is escaped (the parser above would have failed otherwise).
    assert!(svg.contains("cyclictest &lt;2.40&gt; &amp; lever"));
}

#[test]
fn nothing_to_plot_without_histograms() {
    let mut r = import_file(&fixture_path(
        env!("CARGO_MANIFEST_DIR"),
        "cyclictest-2.40-t2-h60-spike40.txt",
    ))
    .unwrap();
    r.threads.iter_mut().for_each(|t| t.histogram = None);
    assert!(lever_latency::plot::svg(&r, "x").is_none());
}
