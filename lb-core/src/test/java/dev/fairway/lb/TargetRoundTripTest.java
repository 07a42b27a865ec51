package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.fairway.lb.internal.Targets;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A target's estimated round-trip time: the closeness a distance-measuring source hands over. */
class TargetRoundTripTest {
  @Test
  void roundTripTime_isUnknownUntilSet_andSurvivesTheOtherWithers() {
    Target t = Target.of("10.0.0.1", 80);
    assertThat(t.roundTripTime()).isEmpty();
    assertThat(t.roundTripNanos()).isEqualTo(-1);

    Target close = t.withRoundTripTime(Duration.ofMillis(3)).withWeight(2).withZone("a").withHealthy(false);
    assertThat(close.roundTripTime()).contains(Duration.ofMillis(3));
    assertThat(close.roundTripNanos()).isEqualTo(3_000_000);
    assertThat(close.withRoundTripTime(null).roundTripNanos()).isEqualTo(-1);
    assertThat(close.withRoundTripTime(Duration.ofDays(365 * 400)).roundTripNanos()).isEqualTo(Long.MAX_VALUE);
    assertThat(close).hasToString("Target{10.0.0.1:80, weight=2, zone=a, unhealthy, rtt=PT0.003S}");
  }

  @Test
  void negativeRoundTripTime_isRefusedNamingTheValue() {
    assertThatThrownBy(() -> Target.of("10.0.0.1", 80).withRoundTripTime(Duration.ofMillis(-1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("roundTripTime: PT-0.001S (expected: zero or more, or null for unknown)");
  }

  @Test
  void aChangedRoundTripTime_isAChangedTarget_soSourcesPublishIt() {
    Target t = Target.of("10.0.0.1", 80).withRoundTripTime(Duration.ofMillis(3));
    assertThat(Targets.sameAs(t, t.withRoundTripTime(Duration.ofMillis(3)))).isTrue();
    assertThat(Targets.sameAs(t, t.withRoundTripTime(Duration.ofMillis(4)))).isFalse();
    assertThat(Targets.sameTargets(List.of(t), List.of(t.withRoundTripTime(null)))).isFalse();
    assertThat(t.sameAs(t.withRoundTripTime(Duration.ofMillis(4)))).isFalse();
  }

  @Test
  void aSourceUpdate_thatOnlyChangesTheRoundTripTime_reachesTheBalancer() {
    MutableTargetSource source = new MutableTargetSource(List.of(Target.of("10.0.0.1", 80)));
    try (LoadBalancer lb = LoadBalancer.builder("orders").targets(source).build()) {
      source.set(List.of(Target.of("10.0.0.1", 80).withRoundTripTime(Duration.ofMillis(7))));
      assertThat(lb.status()).singleElement()
          .satisfies(status -> assertThat(status.target().roundTripTime()).contains(Duration.ofMillis(7)));
    }
  }
}
