package dev.fairway.lb.internal;

/**
 * What a failed call tells about its target and about resending it. Produced by
 * {@link Failures#classify(Throwable)}; lb-core's passive health and lb-okhttp's retry policy both
 * decide from it, so they never disagree about one exception.
 */
public enum FailureKind {
  /**
   * No connection was made (refused, no route, unknown host, connect timed out): the request never
   * left the client, so it is safe to resend for any method, and the target is ejected at once (a
   * healthy server does not refuse).
   */
  CONNECT(true, true, true),
  /**
   * The TLS handshake failed for a reason other than the peer's certificate (for example the peer
   * closed the connection mid-handshake): nothing was sent, so it is safe to resend.
   */
  TLS_HANDSHAKE(true, true, false),
  /**
   * The peer's certificate was rejected (untrusted, expired, wrong host name). Nothing was sent, but
   * resending elsewhere is pointless when every instance shares the configuration; OkHttp itself does
   * not retry it. It counts as a failure of the target.
   */
  CERTIFICATE(true, false, false),
  /** A read or write timed out after the connection was made: the server may have acted on it. */
  TIMEOUT(false, true, false),
  /** Any other I/O failure after the connection was made: the server may have acted on it. */
  IO(false, true, false),
  /**
   * The calling thread was interrupted (an {@link InterruptedException}, a {@link
   * java.nio.channels.ClosedByInterruptException}, or Okio's {@code InterruptedIOException}
   * "interrupted"): the caller stopped waiting. Says nothing about the target, so it is no failure
   * of it, and it is never retried: the interrupt would end the next try the same way, and the
   * caller no longer wants the answer.
   */
  INTERRUPTED(false, false, false),
  /** Not an I/O failure (a bug, a rejected argument): says nothing reliable about the target. */
  OTHER(false, false, false);

  private final boolean neverSent;
  private final boolean worthRetrying;
  private final boolean ejectsAtOnce;

  FailureKind(boolean neverSent, boolean worthRetrying, boolean ejectsAtOnce) {
    this.neverSent = neverSent;
    this.worthRetrying = worthRetrying;
    this.ejectsAtOnce = ejectsAtOnce;
  }

  /** True if the request cannot have reached the server, so resending it is safe for any method. */
  public boolean neverSent() {
    return neverSent;
  }

  /** True if another target may well succeed where this one failed. */
  public boolean worthRetrying() {
    return worthRetrying;
  }

  /** True if this one failure is proof enough to eject the target without waiting for more. */
  public boolean ejectsAtOnce() {
    return ejectsAtOnce;
  }
}
