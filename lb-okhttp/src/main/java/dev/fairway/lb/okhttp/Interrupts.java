package dev.fairway.lb.okhttp;

import dev.fairway.lb.internal.Failures;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import okhttp3.Call;
import org.jspecify.annotations.Nullable;

/**
 * How the interceptor ends a call whose caller was interrupted (Resilience4j's {@code TimeLimiter},
 * {@code Future.cancel(true)}, {@code ExecutorService.shutdownNow()}). The caller no longer wants
 * the answer, so the call ends as a cancelled one: every copy is cancelled and every pick released
 * (no failure of a target, no latency sample, no retry, no hedge), and the caller gets an {@link
 * InterruptedIOException}, an {@code IOException} as OkHttp's callers expect, with the thread's
 * interrupt flag set again (OkHttp 5's connect step clears it when it throws its plain {@link
 * InterruptedException}).
 */
final class Interrupts {
  private Interrupts() {}

  /**
   * True if the current thread, which ran the call, was interrupted: its interrupt flag is set, or
   * {@code failure} says so ({@link Failures#isInterruption}; the flag is cleared by then when the
   * failure is an {@link InterruptedException}).
   */
  static boolean interrupted(@Nullable Throwable failure) {
    return Thread.currentThread().isInterrupted() || Failures.isInterruption(failure);
  }

  /**
   * Ends {@code call} as interrupted: cancels it first, so that whatever completes its copies from
   * now on releases them ({@link Attempt#complete}), sets the thread's interrupt flag, and returns
   * what to throw: {@code cause} itself if it is an interrupt's {@link InterruptedIOException},
   * else a new one caused by it.
   */
  static InterruptedIOException end(Call call, @Nullable Throwable cause) {
    call.cancel();
    Thread.currentThread().interrupt();
    if (cause instanceof InterruptedIOException e && !(cause instanceof SocketTimeoutException)
        && Failures.isInterruption(e)) {
      return e;
    }
    InterruptedIOException e = new InterruptedIOException("interrupted");
    if (cause != null) {
      e.initCause(cause);
    }
    return e;
  }
}
