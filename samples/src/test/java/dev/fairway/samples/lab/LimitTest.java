package dev.fairway.samples.lab;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

import org.junit.jupiter.api.Test;

class LimitTest {
  private static final int[] C = {8, 8, 8, 8};
  private static final double[] S = {0.05, 0.15, 0.30, 0.50};

  @Test
  void light_isTheTwentyFastestWorkers() {
    assertThat(Limit.rps(20, C, S)).isCloseTo(8 / 0.05 + 8 / 0.15 + 4 / 0.30, within(1e-9));
    assertThat(Limit.rps(20, C, S)).isCloseTo(226.67, within(0.01));
  }

  @Test
  void steady_isEveryWorker() {
    assertThat(Limit.rps(100, C, S)).isCloseTo(256.0, within(1e-9));
    assertThat(Limit.rps(32, C, S)).isCloseTo(256.0, within(1e-9));
  }

  @Test
  void order_ofBackendsDoesNotMatter() {
    assertThat(Limit.rps(12, new int[] {8, 8}, new double[] {0.5, 0.05})).isCloseTo(8 / 0.05 + 4 / 0.5, within(1e-9));
  }

  @Test
  void failure_averagesFullAndThreeBackendLimits() {
    double three = 8 / 0.15 + 8 / 0.30 + 8 / 0.50;
    assertThat(Limit.averagedRps(Scenario.FAILURE, 100, 8, S)).isCloseTo(256.0 / 3 + three * 2 / 3, within(0.01));
    assertThat(Limit.averagedRps(Scenario.RECOVERY, 100, 8, S)).isCloseTo(256.0 * 2 / 3 + three / 3, within(0.01));
  }

  @Test
  void burst_rampsThroughTheUsersBelowThirtyTwo() {
    // 10 -> 250 over 30% of the window: below 32 users for (22 / 240) of each ramp.
    double avg = Limit.averagedRps(Scenario.BURST, 250, 8, S);
    assertThat(avg).isLessThan(256.0).isGreaterThan(256.0 * 0.9);
    assertThat(Scenario.BURST.usersAt(0, 250)).isEqualTo(10);
    assertThat(Scenario.BURST.usersAt(0.5, 250)).isEqualTo(250);
    assertThat(Scenario.BURST.usersAt(1, 250)).isEqualTo(10);
    assertThat(Scenario.BURST.usersAt(0.15, 250)).isEqualTo(130);
  }

  @Test
  void fleet_isSteadysLimit() {
    assertThat(Limit.averagedRps(Scenario.FLEET, 100, 8, S)).isCloseTo(256.0, within(1e-9));
  }

  @Test
  void slowdown_countsBackendOneAtTenTimesItsServiceTimeForTwoThirds() {
    // From 1/3 on backend-1 serves at 0.5 s: 8/0.5 + 8/0.15 + 8/0.30 + 8/0.50 = 112 rps.
    double slowed = 8 / 0.5 + 8 / 0.15 + 8 / 0.30 + 8 / 0.50;
    assertThat(slowed).isCloseTo(112.0, within(1e-9));
    assertThat(Limit.averagedRps(Scenario.SLOWDOWN, 100, 8, S)).isCloseTo(256.0 / 3 + slowed * 2 / 3, within(1e-6));
    assertThat(Limit.averagedRps(Scenario.SLOWDOWN, 100, 8, S)).isCloseTo(160.0, within(1e-6));
  }

  @Test
  void slowdown_withFewUsersPrefersTheBackendsThatStayedFast() {
    // 20 users after the slowdown: backend-2 and -3 (16 workers at 0.15 / 0.30 s) come before
    // backend-1 at 0.5 s, which ties with backend-4 for the last 4.
    assertThat(Limit.instant(Scenario.SLOWDOWN, 0.5, 20, 8, S)).isCloseTo(8 / 0.15 + 8 / 0.30 + 4 / 0.5, within(1e-9));
    assertThat(Limit.instant(Scenario.SLOWDOWN, 0.2, 20, 8, S)).isCloseTo(Limit.rps(20, C, S), within(1e-9));
  }

  @Test
  void fastfail_dropsBackendTwoForTwoThirds() {
    double withoutTwo = 8 / 0.05 + 8 / 0.30 + 8 / 0.50;
    assertThat(Limit.averagedRps(Scenario.FASTFAIL, 100, 8, S)).isCloseTo(256.0 / 3 + withoutTwo * 2 / 3, within(1e-6));
    assertThat(Limit.averagedRps(Scenario.FASTFAIL, 100, 8, S)).isCloseTo(220.444, within(0.001));
  }
}
