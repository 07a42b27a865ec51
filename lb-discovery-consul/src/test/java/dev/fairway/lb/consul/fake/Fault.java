package dev.fairway.lb.consul.fake;

/**
 * What a {@link FakeConsul} does wrong while the fault is set. Agent down (connection refused) is
 * {@link FakeConsul#stopAgent()} / {@link FakeConsul#startAgent()}; an index going backwards is
 * {@link FakeConsul#restoreIndex(long)}; the same body under a new index is
 * {@link FakeConsul#touch(String)}; empty, all-critical, warning-only, maintenance, empty
 * Service.Address, IPv6, duplicate ids and 1,000-instance replies are data ({@link Instance}).
 */
public enum Fault {
  /** 500 {@code No cluster leader}. */
  NO_CLUSTER_LEADER_500(500, "No cluster leader"),
  /** 429 from Consul's RPC rate limiter. */
  TOO_MANY_REQUESTS_429(429, "rate limit exceeded"),
  /** 503, as from a load balancer in front of the agents. */
  UNAVAILABLE_503(503, "Service Unavailable"),
  /** 403 as for a token without {@code service:read}. */
  PERMISSION_DENIED_403(403, "Permission denied"),
  /** 400 as for a request Consul cannot parse. */
  BAD_REQUEST_400(400, "Invalid wait time"),
  /** {@code X-Consul-Index: 0}. */
  INDEX_ZERO(200, null),
  /** No {@code X-Consul-Index} header. */
  INDEX_MISSING(200, null),
  /** {@code X-Consul-Index: 12abc}. */
  INDEX_NON_NUMERIC(200, null),
  /** A 200 whose body is not JSON that parses. */
  MALFORMED_JSON(200, null),
  /** The right body cut in half, with a matching Content-Length. */
  TRUNCATED_JSON(200, null),
  /** A 200 whose body is {@code null}. */
  NULL_BODY(200, null),
  /** A 502 HTML page from a proxy. */
  HTML_502(502, null),
  /** A 200 HTML page from a proxy or captive portal. */
  HTML_200(200, null),
  /** The socket is closed after half the body. */
  CLOSE_MID_REPLY(200, null),
  /** The request is read and never answered (until the fault clears or the fake closes). */
  STALL(0, null),
  /** Valid replies with {@code X-Consul-Knownleader: false} and a two-minute {@code LastContact}. */
  NO_KNOWN_LEADER(200, null),
  /** Every request moves the index and is answered at once (a churning service). */
  INDEX_CHURN(200, null),
  /** Always {@code []}, whatever is registered. */
  EMPTY_LIST(200, null);

  final int status;
  final String text;

  Fault(int status, String text) {
    this.status = status;
    this.text = text;
  }
}
