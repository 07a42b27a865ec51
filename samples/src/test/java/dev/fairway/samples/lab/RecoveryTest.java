package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class RecoveryTest {
  /** 10 buckets of 0.1 s: backend-1 serves 40% before the kill (bucket 3), none until bucket 7. */
  private static long[][] series() {
    long[][] s = new long[12][];
    for (int b = 0; b < 3; b++) {
      s[b] = new long[] {40, 30, 20, 10};
    }
    for (int b = 3; b < 7; b++) {
      s[b] = new long[] {0, 50, 30, 20};
    }
    s[7] = new long[] {10, 50, 30, 10};
    s[8] = new long[] {30, 40, 20, 10};
    s[9] = new long[] {40, 30, 20, 10};
    s[10] = new long[] {40, 30, 20, 10};
    s[11] = new long[] {0, 0, 0, 0};
    return s;
  }

  @Test
  void baseline_isTheShareBeforeTheKill() {
    assertThat(ScenarioRun.baselineShare(series(), 0.1, 0.3)).isCloseTo(0.4, within(1e-9));
  }

  @Test
  void recovery_endsAtTheFirstThreeBucketsAtEightyPercentOfTheBaseline() {
    // Buckets 7..9: 80 of 300 = 26.7% < 32%; buckets 8..10: 110 of 300 = 36.7% >= 32% -> ends at 1.1 s.
    assertThat(ScenarioRun.recoverySeconds(series(), 12, 0.1, 0.65, 0.4)).isCloseTo(1.1 - 0.65, within(1e-9));
  }

  @Test
  void recovery_ignoresBucketsStillFilling() {
    // Bucket 10 is where the share first holds; with only 10 complete buckets it does not count yet.
    assertThat(ScenarioRun.recoverySeconds(series(), 10, 0.1, 0.65, 0.4)).isNaN();
    assertThat(ScenarioRun.recoverySeconds(series(), 11, 0.1, 0.65, 0.4)).isCloseTo(1.1 - 0.65, within(1e-9));
  }

  @Test
  void recovery_isNaNWhenTheShareNeverReturns() {
    long[][] s = series();
    for (int b = 7; b < s.length; b++) {
      s[b][0] = 0;
    }
    assertThat(ScenarioRun.recoverySeconds(s, 12, 0.1, 0.65, 0.4)).isNaN();
  }
}
