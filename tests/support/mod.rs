//! Test servers for the live-refresh tests: moto's EC2 server (a real EC2 API implementation, started as a
//! child process and killed on drop), a tiny HTTP/1.1 server with a pluggable handler (fault-injecting proxy in
//! front of moto, recorded Pricing API responses), a server that never answers, and a port nobody listens on.
//!
//! Nothing here talks to AWS: every client in the tests gets an explicit 127.0.0.1 endpoint and fake credentials.

#![allow(dead_code)]

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

/// The fake credentials every test uses (moto accepts any).
pub fn fake_credentials() -> gpuplan::catalog::refresh::StaticCredentials {
    gpuplan::catalog::refresh::StaticCredentials {
        access_key_id: "testing".into(),
        secret_access_key: "testing".into(),
        session_token: Some("testing".into()),
    }
}

pub fn fixtures_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures")
}

fn free_port() -> u16 {
    TcpListener::bind("127.0.0.1:0").expect("bind an ephemeral port").local_addr().unwrap().port()
}

/// A port on 127.0.0.1 where nothing listens (connections are refused).
pub fn dead_endpoint() -> String {
    format!("http://127.0.0.1:{}", free_port())
}

// -----------------------------------------------------------------------------------------------------------------
// moto

/// `python3 -m moto.server` on a free port, killed on drop.
pub struct Moto {
    child: Child,
    pub url: String,
}

pub const MOTO_INSTALL: &str = "pip install 'moto[server]==5.2.1'";

impl Moto {
    pub fn start() -> Moto {
        let python = std::env::var("GPUPLAN_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
        let port = free_port();
        let child = Command::new(&python)
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start `{python} -m moto.server`: {e}; install it: {MOTO_INSTALL}"));
        let mut moto = Moto { child, url: format!("http://127.0.0.1:{port}") };
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            if let Some(status) = moto.child.try_wait().expect("poll moto") {
                panic!("moto server exited with {status} before answering; is it installed? {MOTO_INSTALL}");
            }
            let probe = http_request(&format!("127.0.0.1:{port}"), "GET", "/moto-api/", &[], b"");
            if probe.is_ok_and(|response| response.status == 200) {
                return moto;
            }
            assert!(Instant::now() < deadline, "moto server did not answer on port {port} within 60 s");
            thread::sleep(Duration::from_millis(100));
        }
    }

    pub fn addr(&self) -> String {
        self.url.trim_start_matches("http://").to_string()
    }
}

impl Drop for Moto {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A resource file of the installed moto (gzip JSON under moto/ec2/resources), read by moto's own Python, so
/// tests compare against exactly the data the server serves.
pub fn moto_resource(relative: &str) -> serde_json::Value {
    let python = std::env::var("GPUPLAN_TEST_PYTHON").unwrap_or_else(|_| "python3".into());
    let script = "import gzip, os, sys, moto; \
                  p = os.path.join(os.path.dirname(moto.__file__), 'ec2', 'resources', sys.argv[1]); \
                  sys.stdout.write(gzip.open(p).read().decode())";
    let out = Command::new(python).args(["-c", script, relative]).output().expect("run python3");
    assert!(out.status.success(), "reading moto resource {relative}: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("moto resource is JSON")
}

// -----------------------------------------------------------------------------------------------------------------
// A small HTTP/1.1 server

#[derive(Debug, Clone)]
pub struct Request {
    pub method: String,
    pub path: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Request {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str())
    }

    /// A parameter of a form-encoded (EC2 query protocol) body, e.g. "Action".
    pub fn form_param(&self, name: &str) -> Option<String> {
        let body = std::str::from_utf8(&self.body).ok()?;
        body.split('&').find_map(|pair| {
            let (k, v) = pair.split_once('=')?;
            (k == name).then(|| percent_decode(v))
        })
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body).unwrap_or(serde_json::Value::Null)
    }
}

fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => {
                let hex = std::str::from_utf8(&bytes[i + 1..i + 3]).unwrap_or("00");
                out.push(u8::from_str_radix(hex, 16).unwrap_or(b'?'));
                i += 3;
            }
            b'+' => {
                out.push(b' ');
                i += 1;
            }
            b => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[derive(Debug, Clone)]
pub struct Response {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Response {
    pub fn new(status: u16, content_type: &str, body: impl Into<Vec<u8>>) -> Response {
        Response { status, headers: vec![("Content-Type".into(), content_type.into())], body: body.into() }
    }

    /// An EC2 (query protocol) error document.
    pub fn ec2_error(status: u16, code: &str, message: &str) -> Response {
        Response::new(
            status,
            "text/xml;charset=UTF-8",
            format!(
                "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<Response><Errors><Error><Code>{code}</Code>\
                 <Message>{message}</Message></Error></Errors><RequestID>test-request</RequestID></Response>"
            ),
        )
    }

    /// An awsJson1_1 error (the Pricing API's protocol).
    pub fn json_error(status: u16, code: &str, message: &str) -> Response {
        Response::new(
            status,
            "application/x-amz-json-1.1",
            serde_json::json!({"__type": code, "message": message}).to_string(),
        )
    }
}

pub type Handler = Arc<dyn Fn(&Request) -> Response + Send + Sync>;

/// Serves HTTP/1.1 (keep-alive, Content-Length bodies) on 127.0.0.1 with `handler`, recording every request.
pub struct HttpServer {
    pub url: String,
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    pub requests: Arc<Mutex<Vec<Request>>>,
}

impl HttpServer {
    pub fn start(handler: impl Fn(&Request) -> Response + Send + Sync + 'static) -> HttpServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().unwrap();
        let stop = Arc::new(AtomicBool::new(false));
        let requests = Arc::new(Mutex::new(Vec::new()));
        let handler: Handler = Arc::new(handler);
        {
            let (stop, requests) = (stop.clone(), requests.clone());
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(stream) = stream else { continue };
                    let (handler, requests) = (handler.clone(), requests.clone());
                    thread::spawn(move || serve_connection(stream, handler, requests));
                }
            });
        }
        HttpServer { url: format!("http://{addr}"), addr, stop, requests }
    }

    pub fn requests(&self) -> Vec<Request> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for HttpServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect_timeout(&self.addr, Duration::from_secs(1));
    }
}

fn serve_connection(stream: TcpStream, handler: Handler, requests: Arc<Mutex<Vec<Request>>>) {
    let mut reader = BufReader::new(stream.try_clone().expect("clone stream"));
    let mut writer = stream;
    while let Some(request) = read_request(&mut reader) {
        requests.lock().unwrap().push(request.clone());
        let response = handler(&request);
        if write_response(&mut writer, &response).is_err() {
            return;
        }
    }
}

fn read_head(reader: &mut impl BufRead) -> Option<(String, Vec<(String, String)>)> {
    let mut first = String::new();
    if reader.read_line(&mut first).ok()? == 0 {
        return None;
    }
    let mut headers = Vec::new();
    loop {
        let mut line = String::new();
        if reader.read_line(&mut line).ok()? == 0 {
            return None;
        }
        let line = line.trim_end();
        if line.is_empty() {
            break;
        }
        if let Some((k, v)) = line.split_once(':') {
            headers.push((k.trim().to_string(), v.trim().to_string()));
        }
    }
    Some((first.trim_end().to_string(), headers))
}

fn read_body(reader: &mut impl BufRead, headers: &[(String, String)]) -> Option<Vec<u8>> {
    let header = |name: &str| headers.iter().find(|(k, _)| k.eq_ignore_ascii_case(name)).map(|(_, v)| v.as_str());
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        let mut body = Vec::new();
        loop {
            let mut size = String::new();
            reader.read_line(&mut size).ok()?;
            let size = usize::from_str_radix(size.trim().split(';').next()?, 16).ok()?;
            let mut chunk = vec![0; size + 2];
            reader.read_exact(&mut chunk).ok()?;
            if size == 0 {
                return Some(body);
            }
            body.extend_from_slice(&chunk[..size]);
        }
    }
    let length: usize = header("content-length").and_then(|v| v.parse().ok()).unwrap_or(0);
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some(body)
}

fn read_request(reader: &mut impl BufRead) -> Option<Request> {
    let (first, headers) = read_head(reader)?;
    let mut parts = first.split_whitespace();
    let method = parts.next()?.to_string();
    let path = parts.next()?.to_string();
    let body = read_body(reader, &headers)?;
    Some(Request { method, path, headers, body })
}

fn write_response(writer: &mut impl Write, response: &Response) -> std::io::Result<()> {
    let mut head = format!("HTTP/1.1 {} {}\r\n", response.status, reason(response.status));
    for (k, v) in &response.headers {
        if !k.eq_ignore_ascii_case("content-length")
            && !k.eq_ignore_ascii_case("transfer-encoding")
            && !k.eq_ignore_ascii_case("connection")
        {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    head.push_str(&format!("Content-Length: {}\r\n\r\n", response.body.len()));
    writer.write_all(head.as_bytes())?;
    writer.write_all(&response.body)?;
    writer.flush()
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        404 => "Not Found",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// One request over a fresh connection (`Connection: close`).
pub fn http_request(
    addr: &str,
    method: &str,
    path: &str,
    headers: &[(String, String)],
    body: &[u8],
) -> std::io::Result<Response> {
    let mut stream = TcpStream::connect(addr)?;
    stream.set_read_timeout(Some(Duration::from_secs(60)))?;
    let mut head = format!("{method} {path} HTTP/1.1\r\n");
    for (k, v) in headers {
        if !k.eq_ignore_ascii_case("connection") && !k.eq_ignore_ascii_case("content-length") {
            head.push_str(&format!("{k}: {v}\r\n"));
        }
    }
    if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
        head.push_str(&format!("Host: {addr}\r\n"));
    }
    head.push_str(&format!("Content-Length: {}\r\nConnection: close\r\n\r\n", body.len()));
    stream.write_all(head.as_bytes())?;
    stream.write_all(body)?;
    let mut reader = BufReader::new(stream);
    let invalid = || std::io::Error::new(std::io::ErrorKind::InvalidData, "bad HTTP response");
    let (status_line, headers) = read_head(&mut reader).ok_or_else(invalid)?;
    let status = status_line.split_whitespace().nth(1).and_then(|s| s.parse().ok()).ok_or_else(invalid)?;
    let body = if headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("content-length"))
        || headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("transfer-encoding"))
    {
        read_body(&mut reader, &headers).ok_or_else(invalid)?
    } else {
        let mut body = Vec::new();
        reader.read_to_end(&mut body)?;
        body
    };
    Ok(Response { status, headers, body })
}

/// Forwards a request to `addr` unchanged (the SigV4 signature stays valid: same path, headers and body).
pub fn forward(addr: &str, request: &Request) -> Response {
    http_request(addr, &request.method, &request.path, &request.headers, &request.body)
        .unwrap_or_else(|e| Response::new(502, "text/plain", format!("proxy: {e}")))
}

/// A proxy in front of moto that answers the first `failures.len()` requests of each EC2 action with the given
/// responses, then forwards. Records every request (the retries are visible in `requests()`).
pub fn faulty_proxy(moto_addr: String, failures: Vec<Response>) -> HttpServer {
    let seen: Mutex<BTreeMap<String, usize>> = Mutex::new(BTreeMap::new());
    HttpServer::start(move |request| {
        let action = request.form_param("Action").unwrap_or_default();
        let n = {
            let mut seen = seen.lock().unwrap();
            let n = seen.entry(action).or_insert(0);
            *n += 1;
            *n
        };
        match failures.get(n - 1) {
            Some(failure) => failure.clone(),
            None => forward(&moto_addr, request),
        }
    })
}

// -----------------------------------------------------------------------------------------------------------------
// Pricing API (recorded-shape GetProducts responses)

/// Serves tests/fixtures/pricing/<region>.page<N>.json for GetProducts: the first page when the request has no
/// NextToken, else the file the token names. `failures` are answered first (one per request).
pub fn pricing_server(failures: Vec<Response>) -> HttpServer {
    pricing_server_in(fixtures_dir().join("pricing"), failures)
}

/// [`pricing_server`] answering from the pages in `dir` (a test's edited copy of tests/fixtures/pricing). A
/// request filtered to `volumeApiName` (the gp3 EBS prices) gets `<region>.ebs.json`.
pub fn pricing_server_in(dir: PathBuf, failures: Vec<Response>) -> HttpServer {
    let count = Mutex::new(0usize);
    HttpServer::start(move |request| {
        let n = {
            let mut count = count.lock().unwrap();
            *count += 1;
            *count
        };
        if let Some(failure) = failures.get(n - 1) {
            return failure.clone();
        }
        if request.header("x-amz-target") != Some("AWSPriceListService.GetProducts") {
            return Response::json_error(400, "UnknownOperationException", "only GetProducts is recorded");
        }
        let body = request.json();
        let region = body["Filters"]
            .as_array()
            .and_then(|filters| filters.iter().find(|f| f["Field"] == "regionCode"))
            .and_then(|f| f["Value"].as_str())
            .unwrap_or("")
            .to_string();
        let ebs = body["Filters"].as_array().is_some_and(|filters| filters.iter().any(|f| f["Field"] == "volumeApiName"));
        let file = match body["NextToken"].as_str() {
            Some(token) => format!("{token}.json"),
            None if ebs => format!("{region}.ebs.json"),
            None => format!("{region}.page1.json"),
        };
        match std::fs::read(dir.join(&file)) {
            Ok(bytes) => Response::new(200, "application/x-amz-json-1.1", bytes),
            Err(_) => Response::json_error(400, "InvalidParameterException", &format!("no recorded page {file}")),
        }
    })
}

// -----------------------------------------------------------------------------------------------------------------
// A server that accepts connections and never answers.

pub struct SilentServer {
    pub url: String,
    _accepted: Arc<Mutex<Vec<TcpStream>>>,
}

impl SilentServer {
    pub fn start() -> SilentServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let url = format!("http://{}", listener.local_addr().unwrap());
        let accepted = Arc::new(Mutex::new(Vec::new()));
        let keep = accepted.clone();
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                keep.lock().unwrap().push(stream);
            }
        });
        SilentServer { url, _accepted: accepted }
    }
}
