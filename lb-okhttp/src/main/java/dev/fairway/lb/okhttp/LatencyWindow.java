package dev.fairway.lb.okhttp;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/**
 * A service's recent response times and a percentile of them, for {@link
 * HedgingPolicy#percentile(double)}. Calls record into an HdrHistogram {@link Recorder} (wait-free,
 * no allocation: the range is fixed at 1 µs .. 60 s, 2 significant digits, longer times are counted
 * as 60 s). Every {@value #SLICE_SECONDS} s, the first caller that notices swaps the recorder's
 * interval into a ring of {@value #SLICES} slices and recomputes the percentile over the ring, so
 * the delay follows the last ~10 s; until the ring holds {@link HedgingPolicy#MIN_SAMPLES} values
 * the delay is -1 (no hedging). Time comes from the injected ticker, so tests move it by hand.
 *
 * <p>Memory: 8 histograms of about 20 KB each, 160 KB per service (the recorder's two, the ring's
 * five, one sum). Thread-safe: recording is wait-free; the refresh runs on one caller at a time (others
 * go on with the previous delay), about 2,500 counts added per slice every 2 s.
 */
final class LatencyWindow {
  static final int SLICE_SECONDS = 2;
  static final int SLICES = 5;
  private static final long SLICE_NANOS = TimeUnit.SECONDS.toNanos(SLICE_SECONDS);
  private static final long HIGHEST_MICROS = TimeUnit.SECONDS.toMicros(60);
  private static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  private final double percentile;
  private final Recorder recorder = new Recorder(1, HIGHEST_MICROS, 2);
  private final Histogram[] ring = new Histogram[SLICES]; // guarded by refreshing
  private final Histogram sum = new Histogram(1, HIGHEST_MICROS, 2); // guarded by refreshing
  private final AtomicBoolean refreshing = new AtomicBoolean();
  private int next; // guarded by refreshing
  private volatile long nextRefreshNanos;
  private volatile long delayNanos = -1;

  LatencyWindow(double percentile, long nowNanos) {
    this.percentile = percentile;
    for (int i = 0; i < SLICES; i++) {
      ring[i] = new Histogram(1, HIGHEST_MICROS, 2);
    }
    this.nextRefreshNanos = nowNanos + SLICE_NANOS;
  }

  /** One response time. */
  void record(long nanos) {
    long micros = Math.max(1, Math.min(HIGHEST_MICROS, TimeUnit.NANOSECONDS.toMicros(nanos)));
    recorder.recordValue(micros);
  }

  /** The hedge delay in nanoseconds as of {@code nowNanos}, or -1 while too few responses are known. */
  long delayNanos(long nowNanos) {
    if (nowNanos - nextRefreshNanos >= 0 && refreshing.compareAndSet(false, true)) {
      try {
        refresh(nowNanos);
      } finally {
        refreshing.set(false);
      }
    }
    return delayNanos;
  }

  private void refresh(long nowNanos) {
    // Whole slices that passed with no refresh (no hedgeable call) are empty: idle time ages the
    // window too. What the recorder holds goes into the newest slice.
    long idle = (nowNanos - nextRefreshNanos) / SLICE_NANOS;
    for (long i = 0; i < Math.min(idle, SLICES - 1); i++) {
      ring[next].reset();
      next = (next + 1) % SLICES;
    }
    recorder.getIntervalHistogramInto(ring[next]);
    next = (next + 1) % SLICES;
    sum.reset();
    for (Histogram slice : ring) {
      sum.add(slice);
    }
    nextRefreshNanos = nowNanos + SLICE_NANOS;
    delayNanos = sum.getTotalCount() < HedgingPolicy.MIN_SAMPLES
        ? -1
        : Math.max(MIN_DELAY_NANOS, TimeUnit.MICROSECONDS.toNanos(sum.getValueAtPercentile(percentile)));
  }

  /** Values in the window as of the last refresh; for tests. */
  long samples() {
    return sum.getTotalCount();
  }
}
