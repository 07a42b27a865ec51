package dev.fairway.lb.okhttp;

import dev.fairway.lb.internal.CancellableWait;
import java.io.IOException;
import java.io.InterruptedIOException;
import okhttp3.Call;

/**
 * How the interceptor waits between rounds of attempts. The wait must end early when the call is
 * cancelled: an async call waits on OkHttp's dispatcher thread, and {@link Call#cancel()} does not
 * interrupt it. A seam for tests, which record the waits instead.
 */
interface Sleeper {
  /**
   * lb-core's {@link CancellableWait}: parks in slices of at most 10 ms, checking for cancellation
   * (OkHttp's call timeout cancels too) and interruption.
   */
  Sleeper CANCELLABLE = (millis, call) -> {
    if (!CancellableWait.await(millis, call::isCanceled)) {
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
