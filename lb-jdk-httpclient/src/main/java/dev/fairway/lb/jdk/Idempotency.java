package dev.fairway.lb.jdk;

import java.net.http.HttpRequest;

/**
 * Overrides the method-based idempotency of one request. The JDK's {@link HttpRequest} carries no
 * tags, so the mark travels as the request itself: {@link #mark} returns a request that sends
 * exactly what the given one sends (the same method, URI, headers, body, timeout, version) and
 * carries the mark, which {@link FairwayHttpClient} reads.
 *
 * <pre>{@code
 * HttpRequest create = Idempotency.IDEMPOTENT.mark(HttpRequest.newBuilder(URI.create("http://orders/api/orders"))
 *     .header("Idempotency-Key", key)              // the server deduplicates: safe to re-send
 *     .POST(BodyPublishers.ofString(json))
 *     .build());
 * }</pre>
 *
 * <p>Why a wrapping request rather than a header: a header would go on the wire to the server, and
 * a mark must change what the client does, not what the server sees. {@code HttpRequest} is an
 * abstract class the JDK's client accepts from any subclass, so the wrapper is the one place a
 * request can carry something of the caller's. Building a new request from a marked one with
 * {@code HttpRequest.newBuilder(request, filter)} drops the mark.
 *
 * <p>Without a mark, GET, HEAD, OPTIONS, TRACE, PUT and DELETE are idempotent and every other
 * method is not. An idempotent request is retried on another target after an I/O error once it was
 * sent, and after a retryable status (default 502, 503, 504); a non-idempotent one only when the
 * connection could not be made at all. Mark a request whose body publisher cannot be subscribed to
 * twice (a {@code BodyPublishers.fromPublisher} over a one-shot stream) {@link #NON_IDEMPOTENT}:
 * see {@link FairwayHttpClient} on bodies.
 */
public enum Idempotency {
  /** Safe to send again, whatever the method. */
  IDEMPOTENT,
  /** Never sent again once it may have reached a server, whatever the method. */
  NON_IDEMPOTENT;

  /**
   * {@code request} carrying this mark; a request marked already gets this mark instead.
   *
   * @throws NullPointerException if {@code request} is null
   */
  public HttpRequest mark(HttpRequest request) {
    if (request == null) {
      throw new NullPointerException("request");
    }
    HttpRequest unmarked = request instanceof MarkedRequest marked ? marked.unmarked() : request;
    return new MarkedRequest(unmarked, this);
  }

  /** The mark of {@code request}: true idempotent, false not, null none (the method decides). */
  static @org.jspecify.annotations.Nullable Boolean of(HttpRequest request) {
    return request instanceof MarkedRequest marked ? marked.idempotency() == IDEMPOTENT : null;
  }
}
