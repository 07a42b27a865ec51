package dev.fairway.lb.internal;

import java.io.InterruptedIOException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.BooleanSupplier;

/**
 * The backoff wait of a blocking client integration (lb-okhttp's interceptor, HttpClient 5's classic
 * exchange): their clients cancel a call without interrupting the thread that waits (OkHttp's
 * {@code Call.cancel()}, HttpClient's abort), so the wait polls the call's cancellation between
 * short parks. Each integration's {@code Sleeper} turns a cancelled wait into its client's own
 * exception. Not public API (see the package documentation).
 */
public final class CancellableWait {
  /** The longest park between two looks at the cancellation: how late a cancel may be seen. */
  private static final long SLICE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  private CancellableWait() {}

  /**
   * Parks the thread for {@code millis} (0 or less: not at all) in slices of at most 10 ms,
   * looking at {@code cancelled} before, between and after them.
   *
   * @return true if the whole time passed, false as soon as {@code cancelled} said so
   * @throws InterruptedIOException "interrupted during retry backoff" if the thread is interrupted;
   *     its interrupt flag stays set for the caller
   */
  public static boolean await(long millis, BooleanSupplier cancelled) throws InterruptedIOException {
    long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(millis);
    for (long left = deadline - System.nanoTime(); left > 0; left = deadline - System.nanoTime()) {
      if (cancelled.getAsBoolean()) {
        return false;
      }
      LockSupport.parkNanos(Math.min(left, SLICE_NANOS));
      if (Thread.currentThread().isInterrupted()) {
        throw new InterruptedIOException("interrupted during retry backoff");
      }
    }
    return !cancelled.getAsBoolean();
  }
}
