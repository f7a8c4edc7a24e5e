internal import CCurl
import Foundation

/// HTTP POSTs through libcurl, one at a time, synchronously (the only file that sees libcurl).
///
/// libcurl, not Foundation's `URLSession`: on Linux, `URLSession` runs on this same libcurl but
/// offers no way to trust a private CA — a POST to a loopback server with a self-signed
/// certificate fails with "self-signed certificate" whether `URLSessionCertificateAuthorityInfoFile`
/// (read on Android only), `SSL_CERT_FILE` or `CURL_CA_BUNDLE` names it (Swift 6.3.1) — while
/// `--ca-file` is `CURLOPT_CAINFO` here. It also keeps the run synchronous: no delegate queue,
/// and a timeout that bounds connecting and the whole exchange alike. TLS is verified by libcurl's defaults: the peer's chain against the
/// system store (Debian: `/etc/ssl/certs`) and its name against the URL's host. Redirects are not
/// followed (a 3xx is the answer), so the `Authorization` header never goes to another host.
///
/// Proxies: only where `proxyAllowed` (https to another machine, `DeliverySettings.proxyAllowed`)
/// does libcurl read `https_proxy`, `all_proxy` and `no_proxy`, and then it tunnels (CONNECT), so
/// TLS runs end to end and the proxy sees the host and port only; the request's headers are never
/// sent to the proxy (`CURLHEADER_SEPARATE`). Otherwise the proxy is the empty string, which
/// libcurl takes as "no proxy" whatever the environment says.
struct HTTPClient {
  struct Response: Sendable {
    var status: Int
    /// Names lower-cased; the last value of a repeated header.
    var headers: [String: String]
    /// The start of the body, at most `HTTPClient.bodyLimit` bytes.
    var body: [UInt8]
    /// The server sent more than `body`.
    var bodyCutShort = false
  }

  /// Why a request got no HTTP response.
  enum Failure: Error, Sendable {
    /// Cannot connect, the connection broke, nothing came back, or the time ran out: may work
    /// on a later attempt.
    case transient(String)
    /// The server's certificate is not trusted, or the CA file cannot be used: fails the same way
    /// until the setup changes.
    case untrusted(String)
    /// libcurl refused the request itself.
    case unusable(String)
  }

  /// How much of a response body is kept: enough for an error message, bounded whatever the
  /// server sends.
  static let bodyLimit = 64 << 10

  /// A PEM file of CA certificates to trust besides the system store.
  var caFile: String?
  /// Whether the proxy variables of the environment apply.
  var proxyAllowed = false

  /// libcurl's process-wide setup, done once, before the first handle.
  private static let initialized: Bool = healthetl_curl_global_init() == CURLE_OK

  /// POSTs `body` to `url` with `headers` (`Name: value` lines), giving up after `timeout`
  /// seconds in all (connecting included).
  func post(url: String, headers: [String], body: [UInt8], timeout: Double) -> Result<Response, Failure> {
    guard Self.initialized, let handle = curl_easy_init() else {
      return .failure(.unusable("libcurl could not be initialized"))
    }
    defer { curl_easy_cleanup(handle) }
    var list: UnsafeMutablePointer<curl_slist>?
    // An empty `Expect:` stops libcurl from waiting up to a second for `100 Continue` before
    // sending a body, which many servers never send.
    for header in headers + ["Expect:"] { list = curl_slist_append(list, header) }
    defer { curl_slist_free_all(list) }
    let sink = ResponseSink()
    let context = Unmanaged.passUnretained(sink).toOpaque()
    var errors = [CChar](repeating: 0, count: Int(CURL_ERROR_SIZE) + 1)
    let milliseconds = max(1, Int((timeout * 1000).rounded(.up)))
    var code = CURLE_OK
    var payload = body
    errors.withUnsafeMutableBufferPointer { errorBuffer in
      payload.withUnsafeMutableBytes { bytes in
        let options: [CURLcode] = [
          healthetl_curl_set_string(handle, CURLOPT_URL, url),
          healthetl_curl_set_string(handle, CURLOPT_PROTOCOLS_STR, "http,https"),
          healthetl_curl_set_long(handle, CURLOPT_NOSIGNAL, 1),
          healthetl_curl_set_long(handle, CURLOPT_FOLLOWLOCATION, 0),
          healthetl_curl_set_long(handle, CURLOPT_POST, 1),
          healthetl_curl_set_pointer(handle, CURLOPT_POSTFIELDS, bytes.baseAddress),
          healthetl_curl_set_offset(handle, CURLOPT_POSTFIELDSIZE_LARGE, curl_off_t(bytes.count)),
          healthetl_curl_set_list(handle, CURLOPT_HTTPHEADER, list),
          healthetl_curl_set_long(handle, CURLOPT_TIMEOUT_MS, milliseconds),
          healthetl_curl_set_long(handle, CURLOPT_CONNECTTIMEOUT_MS, milliseconds),
          healthetl_curl_set_pointer(handle, CURLOPT_ERRORBUFFER, errorBuffer.baseAddress),
          healthetl_curl_set_callback(handle, CURLOPT_WRITEFUNCTION, ResponseSink.receiveBody),
          healthetl_curl_set_pointer(handle, CURLOPT_WRITEDATA, context),
          healthetl_curl_set_callback(handle, CURLOPT_HEADERFUNCTION, ResponseSink.receiveHeader),
          healthetl_curl_set_pointer(handle, CURLOPT_HEADERDATA, context),
          healthetl_curl_set_long(handle, CURLOPT_HEADEROPT, Int(CURLHEADER_SEPARATE)),
        ]
        if let failed = options.first(where: { $0 != CURLE_OK }) {
          code = failed
          return
        }
        if let caFile {
          code = healthetl_curl_set_string(handle, CURLOPT_CAINFO, caFile)
          guard code == CURLE_OK else { return }
        }
        if !proxyAllowed {
          code = healthetl_curl_set_string(handle, CURLOPT_PROXY, "")
          guard code == CURLE_OK else { return }
        }
        code = curl_easy_perform(handle)
      }
    }
    guard code == CURLE_OK else {
      let detail = String(decoding: errors.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
      let message = detail.isEmpty ? String(cString: curl_easy_strerror(code)) : detail
      var proxyStatus = 0
      healthetl_curl_connect_code(handle, &proxyStatus)
      return .failure(Self.failure(code, message, proxyStatus: proxyStatus))
    }
    var status = 0
    healthetl_curl_response_code(handle, &status)
    return .success(Response(status: status, headers: sink.headers, body: sink.body, bodyCutShort: sink.bodyCutShort))
  }

  /// Sorts libcurl's errors into what a retry can fix and what it cannot.
  /// - Parameter proxyStatus: the proxy's answer to `CONNECT` (0 when there was none). A proxy
  ///   that refuses the tunnel with a 4xx — 407 wants credentials, 403 forbids the host — does so
  ///   again on every attempt until the setup changes; a 5xx (the server unreachable from the
  ///   proxy), 408 and 429 may pass later.
  static func failure(_ code: CURLcode, _ message: String, proxyStatus: Int = 0) -> Failure {
    if (400...499).contains(proxyStatus), proxyStatus != 408, proxyStatus != 429 {
      let advice =
        proxyStatus == 407
        ? "it wants credentials: give them in the proxy's URL (https_proxy=http://user:password@host:port), or list the server in no_proxy"
        : "ask its operator to allow the server, or list the server in no_proxy"
      return .unusable("the proxy refused the tunnel to the server (HTTP \(proxyStatus)): \(advice)")
    }
    switch code {
    case CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CACERT_BADFILE, CURLE_SSL_CERTPROBLEM, CURLE_SSL_ISSUER_ERROR,
      CURLE_SSL_CRL_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH:
      return .untrusted(message)
    case CURLE_UNSUPPORTED_PROTOCOL, CURLE_URL_MALFORMAT, CURLE_NOT_BUILT_IN, CURLE_OUT_OF_MEMORY,
      CURLE_BAD_FUNCTION_ARGUMENT, CURLE_UNKNOWN_OPTION:
      return .unusable(message)
    default:
      // Refused or reset connections, timeouts, empty replies, name lookups, handshakes cut
      // short: all can be the network or a server restarting.
      return .transient(message)
    }
  }
}

/// Collects a response's headers and the start of its body from libcurl's callbacks.
private final class ResponseSink {
  var headers: [String: String] = [:]
  var body: [UInt8] = []
  var bodyCutShort = false

  static let receiveBody: healthetl_curl_write_callback = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let room = max(0, HTTPClient.bodyLimit - sink.body.count)
    if length > room { sink.bodyCutShort = true }
    data.withMemoryRebound(to: UInt8.self, capacity: length) {
      sink.body.append(contentsOf: UnsafeBufferPointer(start: $0, count: min(room, length)))
    }
    // Everything is taken (and the excess dropped): returning less would abort the transfer.
    return length
  }

  static let receiveHeader: healthetl_curl_write_callback = { data, size, count, context in
    let length = size * count
    guard let data, let context else { return length }
    let sink = Unmanaged<ResponseSink>.fromOpaque(context).takeUnretainedValue()
    let line = data.withMemoryRebound(to: UInt8.self, capacity: length) {
      String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self)
    }
    if line.hasPrefix("HTTP/") {
      // A new response (after an interim 1xx): its headers replace the earlier ones.
      sink.headers = [:]
    } else if let colon = line.firstIndex(of: ":") {
      let name = line[..<colon].trimmingCharacters(in: .whitespaces).lowercased()
      sink.headers[name] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespacesAndNewlines)
    }
    return length
  }
}
