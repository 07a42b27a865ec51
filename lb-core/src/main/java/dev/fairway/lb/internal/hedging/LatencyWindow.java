package dev.fairway.lb.internal.hedging;

import dev.fairway.lb.HedgingPolicy;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.HistogramIterationValue;
import org.HdrHistogram.Recorder;

/**
 * A service's recent response times and a percentile of them, for {@link
 * HedgingPolicy#percentile(double)}. Calls record into an HdrHistogram {@link Recorder} (wait-free,
 * no allocation: the range is fixed at 1 µs .. 60 s, 2 significant digits, longer times are counted
 * as 60 s). The first caller that notices a refresh is due moves what the recorder holds into the
 * current slice of a ring of {@value #SLICES} slices of {@value #SLICE_SECONDS} s and recomputes the
 * percentile over the ring, so the delay follows the last ~10 s. Refreshing is maintenance, asked
 * for by name ({@link #refreshIfDue}); reading the delay, the median and the tail wait is a plain
 * volatile read of what the last refresh found. The delay is -1 (no hedging) until
 * the ring holds {@link HedgingPolicy#MIN_SAMPLES} values; meanwhile refreshes come every 200 ms so
 * hedging starts as soon as it may, after that every {@value #SLICE_SECONDS} s. Time comes from the
 * injected ticker, so tests move it by hand.
 *
 * <p>Memory: 9 histograms of about 20 KB each ({@link #SERVICE_DIGITS}), 180 KB per service (the recorder's two, the ring's
 * five, one interval, one sum). Thread-safe: recording is wait-free; a refresh runs on one caller at
 * a time (the others go on with the previous delay) and adds up every slice's counts.
 */
public final class LatencyWindow {
  public static final int SLICE_SECONDS = 2;
  public static final int SLICES = 5;
  private static final long SLICE_NANOS = TimeUnit.SECONDS.toNanos(SLICE_SECONDS);
  /** While too few values are known, the window is looked at this often, so hedging starts soon. */
  public static final long UNKNOWN_REFRESH_NANOS = TimeUnit.MILLISECONDS.toNanos(200);
  private static final long HIGHEST_MICROS = TimeUnit.SECONDS.toMicros(60);
  private static final long MIN_DELAY_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

  /** Significant digits of a service's window. */
  public static final int SERVICE_DIGITS = 2;
  /**
   * Significant digits of a target's window ({@link ServiceHedging#delayNanos(dev.fairway.lb.Target)}):
   * one, a resolution of about 6%, at 3.4 KB a histogram instead of 21 (31 KB per target instead of
   * 189): a service may have hundreds of targets, and a hedge delay needs no finer grain.
   */
  public static final int TARGET_DIGITS = 1;

  private final double percentile;
  private final Recorder recorder;
  private final Histogram[] ring = new Histogram[SLICES]; // guarded by refreshing
  private final Histogram interval; // guarded by refreshing
  private final Histogram sum; // guarded by refreshing
  private final AtomicBoolean refreshing = new AtomicBoolean();
  private int next; // guarded by refreshing: the ring's current slice
  private long sliceStartNanos; // guarded by refreshing
  private volatile long nextRefreshNanos;
  private volatile long delayNanos = -1;
  private volatile long medianNanos = -1;
  private volatile long tailWaitNanos = -1;
  private final long createdNanos;

  public LatencyWindow(double percentile, long nowNanos) {
    this(percentile, nowNanos, SERVICE_DIGITS);
  }

  /** With {@code digits} significant digits (1 or 2). */
  public LatencyWindow(double percentile, long nowNanos, int digits) {
    this.percentile = percentile;
    this.recorder = new Recorder(1, HIGHEST_MICROS, digits);
    this.interval = new Histogram(1, HIGHEST_MICROS, digits);
    this.sum = new Histogram(1, HIGHEST_MICROS, digits);
    for (int i = 0; i < SLICES; i++) {
      ring[i] = new Histogram(1, HIGHEST_MICROS, digits);
    }
    this.sliceStartNanos = nowNanos;
    this.createdNanos = nowNanos;
    this.nextRefreshNanos = nowNanos + UNKNOWN_REFRESH_NANOS;
  }

  /** One response time. */
  public void record(long nanos) {
    long micros = Math.max(1, Math.min(HIGHEST_MICROS, TimeUnit.NANOSECONDS.toMicros(nanos)));
    recorder.recordValue(micros);
  }

  /**
   * Takes in what was recorded and recomputes the percentile, if a refresh is due at {@code
   * nowNanos}. One caller at a time; the others go on at once.
   */
  public void refreshIfDue(long nowNanos) {
    if (nowNanos - nextRefreshNanos >= 0 && refreshing.compareAndSet(false, true)) {
      try {
        refresh(nowNanos);
      } finally {
        refreshing.set(false);
      }
    }
  }

  /** The hedge delay in nanoseconds as of the last refresh, or -1 while too few responses are known. */
  public long delayNanos() {
    return delayNanos;
  }

  private void refresh(long nowNanos) {
    recorder.getIntervalHistogramInto(interval);
    long sinceSlice = nowNanos - sliceStartNanos;
    if (sinceSlice >= SLICE_NANOS) {
      // The current slice is over; slices that passed with no refresh (no hedgeable call) stay
      // empty, so idle time ages the window too.
      long passed = sinceSlice / SLICE_NANOS;
      for (long i = 0; i < Math.min(passed, SLICES); i++) {
        next = (next + 1) % SLICES;
        ring[next].reset();
      }
      sliceStartNanos += passed * SLICE_NANOS;
    }
    ring[next].add(interval);
    sum.reset();
    for (Histogram slice : ring) {
      sum.add(slice);
    }
    delayNanos = sum.getTotalCount() < HedgingPolicy.MIN_SAMPLES
        ? -1
        : Math.max(MIN_DELAY_NANOS, TimeUnit.MICROSECONDS.toNanos(sum.getValueAtPercentile(percentile)));
    medianNanos = delayNanos < 0 ? -1 : TimeUnit.MICROSECONDS.toNanos(sum.getValueAtPercentile(50));
    tailWaitNanos = delayNanos < 0 ? -1 : tailWait(TimeUnit.NANOSECONDS.toMicros(delayNanos));
    nextRefreshNanos = nowNanos + (delayNanos < 0 ? UNKNOWN_REFRESH_NANOS : SLICE_NANOS);
  }

  /**
   * True if the window is at least a whole window old and held nothing at its last refresh (made
   * now if one is due): its target answered nothing for about 10 s.
   */
  public boolean idle(long nowNanos) {
    if (nowNanos - createdNanos < SLICES * SLICE_NANOS) {
      return false;
    }
    refreshIfDue(nowNanos);
    return samples() == 0; // a value recorded since the last refresh may be lost with it: one response
  }

  /**
   * Of the responses slower than {@code delayMicros}, how much longer than it they took on
   * average, in nanoseconds; -1 when none was slower (nothing tells).
   */
  private long tailWait(long delayMicros) {
    long count = 0;
    double total = 0;
    for (HistogramIterationValue v : sum.recordedValues()) {
      long value = sum.highestEquivalentValue(v.getValueIteratedTo());
      if (value > delayMicros) {
        count += v.getCountAtValueIteratedTo();
        total += (double) (value - delayMicros) * v.getCountAtValueIteratedTo();
      }
    }
    return count == 0 ? -1 : TimeUnit.MICROSECONDS.toNanos((long) (total / count));
  }

  /**
   * How much longer than the hedge delay a response that has not come by then takes, on average, as
   * of the last refresh; -1 while too few responses are known, or none was slower than the delay.
   */
  public long tailWaitNanos() {
    return tailWaitNanos;
  }

  /** The median of the window as of the last refresh, or -1 while too few responses are known. */
  public long medianNanos() {
    return medianNanos;
  }

  /** Values in the window as of the last refresh; for tests. */
  public long samples() {
    return sum.getTotalCount();
  }
}
