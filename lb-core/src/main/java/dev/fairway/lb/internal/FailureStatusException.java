package dev.fairway.lb.internal;

import java.io.IOException;

/**
 * The cause handed to {@link dev.fairway.lb.Pick#failure} for a response whose status is one of the
 * configured failure codes ({@link OutcomeRule}). One class for every integration, so passive
 * health and logs see the same cause whichever client made the call. It carries no stack trace: it
 * stands for a status, not a program error, and one per failed response would only cost. Not public
 * API (see the package documentation).
 */
public final class FailureStatusException extends IOException {
  private static final long serialVersionUID = 1L;

  private final int status;

  /** {@code HTTP <status> from <target>}. */
  public FailureStatusException(int status, String target) {
    super("HTTP " + status + " from " + target);
    this.status = status;
  }

  /** The response's status code. */
  public int status() {
    return status;
  }

  @Override
  public synchronized Throwable fillInStackTrace() {
    return this; // a status, not a program error: the stack trace would only cost
  }
}
