/**
 * HTTP request metrics under Distribution's names (its `registry_http_*`
 * families, which it labels with the route name as `handler`):
 *
 * | metric | type | labels |
 * |---|---|---|
 * | `registry_http_requests_total` | counter | `handler`, `code`, `method` |
 * | `registry_http_request_duration_seconds` | histogram | `handler`, `method` |
 * | `registry_http_request_size_bytes` | histogram | `handler` |
 * | `registry_http_response_size_bytes` | histogram | `handler` |
 * | `registry_http_in_flight_requests` | gauge | `handler` |
 *
 * `method` is in lower case (`get`, `put`, …) and `code` the status, as
 * Distribution labels them. Durations run until the handler returns its `Response` (a streamed body may
 * still be on its way); sizes are the `Content-Length` of the request and of
 * the response (0 when absent, e.g. a chunked upload, and for HEAD).
 *
 * @module
 */
import { InMemoryResponse } from "./in-memory-response.js";
import { onlyReadsRequestBasics, readsRequestBasics } from "../runtime/adapter-capabilities.js";
import { HTTP_DURATION_BUCKETS, PROMETHEUS_CONTENT_TYPE, SIZE_BUCKETS, type Family, type GaugeSeries, type HistogramSeries, type Metrics } from "../util/metrics.js";

/** The families of one {@link Metrics} that {@link instrumentHandler} reports into. */
interface HttpFamilies {
  requests: Family<{ inc(): void }>;
  duration: Family<HistogramSeries>;
  requestSize: Family<HistogramSeries>;
  responseSize: Family<HistogramSeries>;
  inFlight: Family<GaugeSeries>;
}

function httpFamilies(metrics: Metrics): HttpFamilies {
  return {
    requests: metrics.counter("registry_http_requests_total", "Total number of HTTP requests made.", ["handler", "code", "method"]),
    duration: metrics.histogram("registry_http_request_duration_seconds", "The HTTP request latencies in seconds.", ["handler", "method"], HTTP_DURATION_BUCKETS),
    requestSize: metrics.histogram("registry_http_request_size_bytes", "The HTTP request sizes in bytes.", ["handler"], SIZE_BUCKETS),
    responseSize: metrics.histogram("registry_http_response_size_bytes", "The HTTP response sizes in bytes.", ["handler"], SIZE_BUCKETS),
    inFlight: metrics.gauge("registry_http_in_flight_requests", "The in-flight HTTP requests", ["handler"]),
  };
}

/** The series of one `handler` label, looked up once. */
interface HandlerSeries {
  requestSize: HistogramSeries;
  responseSize: HistogramSeries;
  inFlight: GaugeSeries;
}

/**
 * Wrap a fetch handler so that each request is counted into `metrics` under
 * the `handler` label that `handlerOf` gives for its pathname (a fixed string
 * is one label for every request). A thrown error counts as status 500 and is
 * rethrown. The wrapper keeps the `readsRequestBasics` mark of `handler`.
 */
export function instrumentHandler(
  handler: (request: Request) => Promise<Response>,
  metrics: Metrics,
  handlerOf: string | ((pathname: string) => string),
): (request: Request) => Promise<Response> {
  const f = httpFamilies(metrics);
  const byLabel = new Map<string, HandlerSeries>();
  const seriesOf = (label: string): HandlerSeries => {
    let s = byLabel.get(label);
    if (!s) {
      s = { requestSize: f.requestSize.labels(label), responseSize: f.responseSize.labels(label), inFlight: f.inFlight.labels(label) };
      byLabel.set(label, s);
    }
    return s;
  };
  const fixed = typeof handlerOf === "string" ? handlerOf : undefined;
  const classify = typeof handlerOf === "function" ? handlerOf : undefined;
  const wrapped = async (request: Request): Promise<Response> => {
    const start = performance.now();
    const label = fixed ?? classify!(pathnameOf(request.url));
    const method = request.method;
    const s = seriesOf(label);
    s.inFlight.inc();
    let status = 500;
    let responseBytes = 0;
    try {
      const response = await handler(request);
      status = response.status;
      // An in-memory body has its length at hand; reading its `headers` would cost the Node adapter its fast lane.
      if (method !== "HEAD") responseBytes = response instanceof InMemoryResponse ? response.byteLength : contentLength(response.headers.get("content-length"));
      return response;
    } finally {
      s.inFlight.dec();
      const methodLabel = (METHOD_LABEL[method] ??= method.toLowerCase());
      f.requests.labels(label, statusText(status), methodLabel).inc();
      f.duration.labels(label, methodLabel).observe((performance.now() - start) / 1000);
      // GET, HEAD and DELETE carry no body: skip the header lookup on the hottest paths.
      s.requestSize.observe(method === "GET" || method === "HEAD" || method === "DELETE" ? 0 : contentLength(request.headers.get("content-length")));
      s.responseSize.observe(responseBytes);
    }
  };
  return onlyReadsRequestBasics(handler) ? readsRequestBasics(wrapped) : wrapped;
}

/** The path of an absolute URL, without parsing the whole URL. */
function pathnameOf(url: string): string {
  const scheme = url.indexOf("://");
  const slash = url.indexOf("/", scheme < 0 ? 0 : scheme + 3);
  if (slash < 0) return "/";
  let end = url.length;
  const query = url.indexOf("?", slash);
  if (query >= 0) end = query;
  const hash = url.indexOf("#", slash);
  if (hash >= 0 && hash < end) end = hash;
  return url.slice(slash, end);
}

function contentLength(value: string | null): number {
  if (value === null) return 0;
  const n = Number(value);
  return Number.isSafeInteger(n) && n >= 0 ? n : 0;
}

// Methods in lower case, as Distribution (Prometheus' Go client) labels them; made once each.
const METHOD_LABEL: Record<string, string> = Object.create(null) as Record<string, string>;

// Status codes as strings, made once each.
const STATUS_TEXT: string[] = [];
function statusText(status: number): string {
  return (STATUS_TEXT[status] ??= String(status));
}

/**
 * A handler answering GET (and HEAD) with `metrics` in the Prometheus text
 * format 0.0.4; other methods get 405. It does not look at the path.
 */
export function metricsHandler(metrics: Metrics): (request: Request) => Promise<Response> {
  return readsRequestBasics(async (request: Request): Promise<Response> => {
    if (request.method !== "GET" && request.method !== "HEAD") {
      return new Response("method not allowed\n", { status: 405, headers: { allow: "GET, HEAD", "content-type": "text/plain; charset=utf-8" } });
    }
    const body = metrics.render();
    return new Response(request.method === "HEAD" ? null : body, { status: 200, headers: { "content-type": PROMETHEUS_CONTENT_TYPE } });
  });
}
