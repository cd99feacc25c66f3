//! Scraping a metrics endpoint: a plain HTTP GET, and the exposition
//! checked by a real OpenMetrics parser.

/// GET `url` over HTTP/1.0: the status line, the headers and the body.
pub fn http_get(url: &str) -> (String, String, String) {
    use std::io::{Read, Write};
    let rest = url.strip_prefix("http://").unwrap();
    let (host, path) = rest.split_once('/').unwrap();
    let mut conn = std::net::TcpStream::connect(host).unwrap();
    write!(conn, "GET /{path} HTTP/1.0\r\nHost: {host}\r\n\r\n").unwrap();
    let mut reply = String::new();
    conn.read_to_string(&mut reply).unwrap();
    let (head, body) = reply.split_once("\r\n\r\n").unwrap();
    let (status, headers) = head.split_once("\r\n").unwrap_or((head, ""));
    (status.into(), headers.to_lowercase(), body.into())
}

/// The exposition parsed by prometheus_client's OpenMetrics parser (Debian's
/// python3-prometheus-client): one line per sample, `name{labels} value`.
pub fn parse_openmetrics(text: &str) -> Vec<String> {
    use std::io::Write;
    use std::process::{Command, Stdio};
    let python = ["/usr/bin/python3", "python3"]
        .into_iter()
        .find(|p| !p.starts_with('/') || std::path::Path::new(p).exists())
        .unwrap();
    let script = "import sys\n\
        from prometheus_client.openmetrics.parser import text_string_to_metric_families as parse\n\
        for f in parse(sys.stdin.read()):\n\
        \x20   for s in f.samples:\n\
        \x20       labels = ','.join(f'{k}={v}' for k, v in sorted(s.labels.items()))\n\
        \x20       print(f'{f.type} {s.name}{{{labels}}} {s.value!r}')\n";
    let mut child = Command::new(python)
        .args(["-c", script])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("python3 with prometheus_client (python3-prometheus-client)");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(text.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "the OpenMetrics parser refused the exposition: {}\n{text}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(String::from)
        .collect()
}
