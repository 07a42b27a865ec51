package dev.fairway.lb.hc5;

import dev.fairway.lb.internal.CancellableWait;
import java.io.IOException;
import java.io.InterruptedIOException;
import org.apache.hc.client5.http.classic.ExecRuntime;
import org.apache.hc.client5.http.impl.classic.RequestFailedException;

/**
 * How an exchange waits between rounds of attempts. The wait must end early when the request is
 * aborted ({@code cancel()} does not interrupt the waiting thread) or the thread is interrupted. A
 * seam for tests, which record the waits instead.
 */
interface Sleeper {
  /** lb-core's {@link CancellableWait}: parks in slices of at most 10 ms, checking for an abort and an interrupt. */
  Sleeper ABORTABLE = (millis, runtime) -> {
    if (!CancellableWait.await(millis, runtime::isExecutionAborted)) {
      throw new RequestFailedException("Request aborted");
    }
  };

  /**
   * Waits {@code millis} (0 or less: not at all) unless the exchange of {@code runtime} is aborted
   * or the thread interrupted first (its interrupt flag stays set).
   *
   * @throws IOException {@link RequestFailedException} "Request aborted", or {@link InterruptedIOException}
   */
  void sleep(long millis, ExecRuntime runtime) throws IOException;
}
