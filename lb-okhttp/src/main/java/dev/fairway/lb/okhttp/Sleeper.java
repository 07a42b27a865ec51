package dev.fairway.lb.okhttp;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import okhttp3.Call;

/**
 * How the interceptor waits between rounds of attempts. The wait must end early when the call is
 * cancelled: an async call waits on OkHttp's dispatcher thread, and {@link Call#cancel()} does not
 * interrupt it. A seam for tests, which record the waits instead.
 */
interface Sleeper {
  /** Parks in slices of at most 10 ms, checking for cancellation (OkHttp's call timeout cancels too) and interruption. */
  Sleeper CANCELLABLE = (millis, call) -> {
    long slice = TimeUnit.MILLISECONDS.toNanos(10);
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
      if (call.isCanceled()) {
        throw new IOException("Canceled");
      }
      LockSupport.parkNanos(Math.min(left, slice));
      if (Thread.interrupted()) {
        Thread.currentThread().interrupt();
        throw new InterruptedIOException("interrupted during retry backoff");
      }
    }
    if (call.isCanceled()) {
      throw new IOException("Canceled");
    }
  };

  /**
   * Waits {@code millis} (0 or less: not at all) unless {@code call} is cancelled first.
   *
   * @throws IOException "Canceled" if the call was cancelled, or {@link InterruptedIOException}
   */
  void sleep(long millis, Call call) throws IOException;
}
