package dev.fairway.lb.okhttp;

/**
 * Overrides the method-based idempotency of one request, as a request tag:
 *
 * <pre>{@code
 * Request create = new Request.Builder()
 *     .url("http://orders/api/orders")
 *     .post(body)
 *     .header("Idempotency-Key", key)
 *     .tag(Idempotency.class, Idempotency.IDEMPOTENT)   // the server deduplicates: safe to re-send
 *     .build();
 * }</pre>
 *
 * <p>Without the tag, GET, HEAD, OPTIONS, TRACE, PUT and DELETE are idempotent and every other method
 * is not. An idempotent request is retried on another target after an I/O error once it was sent,
 * and after a retryable status (default 502, 503, 504); a non-idempotent one only when the connection
 * could not be made at all.
 */
public enum Idempotency {
  /** Safe to send again, whatever the method. */
  IDEMPOTENT,
  /** Never sent again once it may have reached a server, whatever the method. */
  NON_IDEMPOTENT
}
