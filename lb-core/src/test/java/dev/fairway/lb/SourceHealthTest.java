package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.counts;
import static dev.fairway.lb.Fixtures.sequence;
import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import org.junit.jupiter.api.Test;

/** A target its source reports unhealthy ({@link Target#withHealthy}) is a member used only in panic. */
class SourceHealthTest {
  private final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  @Test
  void unhealthyFromSource_getsNoCalls_whileEnoughOthersAreHealthy() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2).withHealthy(false), t(3)));
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(source).strategy(Strategy.roundRobin()).build();
    assertThat(counts(sequence(lb, 6))).containsOnlyKeys("1", "3");
    assertThat(state(lb, t(2))).isEqualTo(TargetState.UNHEALTHY);

    source.set(List.of(t(1), t(2), t(3))); // the source now reports it healthy
    assertThat(counts(sequence(lb, 6))).containsOnlyKeys("1", "2", "3");
    assertThat(state(lb, t(2))).isEqualTo(TargetState.HEALTHY);
  }

  @Test
  void everyTargetUnhealthyFromSource_panicModeStillRoutesToThem() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 1)
        .targets(t(1).withHealthy(false), t(2).withHealthy(false))
        .strategy(Strategy.roundRobin())
        .build();
    assertThat(counts(sequence(lb, 4))).containsEntry("1", 2).containsEntry("2", 2);
  }

  @Test
  void healthIsPartOfTheValue_butNotOfTheIdentity() {
    Target sick = t(1).withHealthy(false);
    assertThat(sick).isEqualTo(t(1));
    assertThat(sick.healthy()).isFalse();
    assertThat(t(1).healthy()).isTrue();
    assertThat(sick.withWeight(3).healthy()).isFalse();
    assertThat(dev.fairway.lb.internal.Targets.sameTargets(List.of(sick), List.of(t(1)))).isFalse();
    assertThat(sick.toString()).isEqualTo("Target{10.0.0.1:8080, unhealthy}");
  }
}
