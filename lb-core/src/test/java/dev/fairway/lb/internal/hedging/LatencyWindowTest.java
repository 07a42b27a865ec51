package dev.fairway.lb.internal.hedging;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.HedgingPolicy;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The percentile hedge delay on fake time, and which requests may be hedged. */
class LatencyWindowTest {
  private static final long SECOND = TimeUnit.SECONDS.toNanos(1);
  private static final long MS = TimeUnit.MILLISECONDS.toNanos(1);
  private static final long UNKNOWN = LatencyWindow.UNKNOWN_REFRESH_NANOS;

  private static void recordMillis(LatencyWindow window, int from, int to) {
    for (int ms = from; ms <= to; ms++) {
      window.record(ms * MS);
    }
  }

  /** The delay a call starting at {@code nowNanos} reads: the window's maintenance, then its delay. */
  private static long delayAt(LatencyWindow window, long nowNanos) {
    window.refreshIfDue(nowNanos);
    return window.delayNanos();
  }

  @Test
  void delay_isTheP95OfTheWindow_AsSoonAsItHoldsEnoughSamples() {
    LatencyWindow window = new LatencyWindow(95.0, 0);
    recordMillis(window, 1, 100);

    assertThat(delayAt(window, 0)).isEqualTo(-1); // not looked at yet
    assertThat(delayAt(window, UNKNOWN - 1)).isEqualTo(-1);
    long p95 = delayAt(window, UNKNOWN);

    assertThat(window.samples()).isEqualTo(100);
    assertThat(TimeUnit.NANOSECONDS.toMicros(p95)).isBetween(94_500L, 95_500L); // 2 significant digits
  }

  @Test
  void delay_staysOffWithTooFewSamples_andIsLookedAtAgainSoon() {
    LatencyWindow window = new LatencyWindow(95.0, 0);
    recordMillis(window, 1, HedgingPolicy.MIN_SAMPLES - 1);

    assertThat(delayAt(window, UNKNOWN)).isEqualTo(-1);
    assertThat(window.samples()).isEqualTo(99);
    window.record(50 * MS);
    assertThat(delayAt(window, 2 * UNKNOWN - 1)).isEqualTo(-1); // the next look is due at 400 ms
    assertThat(delayAt(window, 2 * UNKNOWN)).isPositive();
    assertThat(window.samples()).isEqualTo(100);
  }

  @Test
  void delay_followsRecentLatency_oldSlicesAgeOut() {
    LatencyWindow window = new LatencyWindow(50.0, 0);
    for (int i = 0; i < 200; i++) {
      window.record(10 * MS);
    }
    assertThat(TimeUnit.NANOSECONDS.toMillis(delayAt(window, UNKNOWN))).isEqualTo(10);

    // Known now: refreshed every 2 s. Four more slices keep the 10 ms values, the fifth drops them.
    for (int k = 1; k <= 4; k++) {
      assertThat(TimeUnit.NANOSECONDS.toMillis(delayAt(window, 2L * k * SECOND + UNKNOWN))).isEqualTo(10);
    }
    assertThat(delayAt(window, 10 * SECOND + UNKNOWN)).isEqualTo(-1);
    for (int i = 0; i < 200; i++) {
      window.record(300 * MS);
    }
    long median = delayAt(window, 10 * SECOND + 2 * UNKNOWN);

    assertThat(window.samples()).isEqualTo(200);
    assertThat(TimeUnit.NANOSECONDS.toMillis(median)).isBetween(298L, 302L);
  }

  @Test
  void delay_afterAnIdleMinute_isOffUntilNewSamplesArrive() {
    LatencyWindow window = new LatencyWindow(95.0, 0);
    recordMillis(window, 1, 150);
    assertThat(delayAt(window, UNKNOWN)).isPositive();

    assertThat(delayAt(window, 62 * SECOND)).isEqualTo(-1); // every slice aged out while idle
    assertThat(window.samples()).isZero();
  }

  @Test
  void delay_isAtLeastOneMillisecond_andLongTimesCountAsSixtySeconds() {
    LatencyWindow fast = new LatencyWindow(95.0, 0);
    for (int i = 0; i < 100; i++) {
      fast.record(10_000); // 10 µs
    }
    assertThat(delayAt(fast, UNKNOWN)).isEqualTo(MS);

    LatencyWindow slow = new LatencyWindow(95.0, 0);
    for (int i = 0; i < 100; i++) {
      slow.record(TimeUnit.HOURS.toNanos(2));
    }
    assertThat(TimeUnit.NANOSECONDS.toSeconds(delayAt(slow, UNKNOWN))).isEqualTo(60);
  }

  @Test
  void extraLoad_isHedgesPerCallOverTheLastTenSeconds() {
    java.util.concurrent.atomic.AtomicLong now = new java.util.concurrent.atomic.AtomicLong();
    RecentCounts counts = new RecentCounts(now::get);
    assertThat(counts.extraLoad()).isZero();
    for (int i = 0; i < 20; i++) {
      counts.call();
    }
    counts.hedge();
    now.set(5 * SECOND);
    for (int i = 0; i < 20; i++) {
      counts.call();
    }
    counts.hedge();
    counts.hedge();

    assertThat(counts.extraLoad()).isEqualTo(3 / 40.0);
    now.set(10 * SECOND); // second 0 has left the window
    assertThat(counts.extraLoad()).isEqualTo(2 / 20.0);
    now.set(15 * SECOND);
    assertThat(counts.extraLoad()).isZero();
  }
}
