package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.inFlight;
import static dev.fairway.lb.Fixtures.state;
import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.net.ConnectException;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * What integrations read of a balancer beside picks: why a target is out and for how long, panic
 * mode, a pick on a given target (a retry on the same instance), and the ejection time.
 */
class StatusViewTest {
  final Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();

  LoadBalancer lb(PassiveHealth health, Target... targets) {
    return Fixtures.builder(ticker, 7).targets(targets).strategy(Strategy.roundRobin()).passiveHealth(health).build();
  }

  static TargetStatus status(LoadBalancer lb, Target target) {
    return lb.status().stream().filter(s -> s.target().equals(target)).findFirst().orElseThrow();
  }

  @Test
  void ejectedTarget_saysPassiveHealth_andHowLongItStaysOut() throws Exception {
    LoadBalancer lb = lb(PassiveHealth.defaults(), t(1), t(2), t(3));
    assertThat(status(lb, t(1)).outReason()).isNull();
    assertThat(status(lb, t(1)).ejectedFor()).isEqualTo(Duration.ZERO);

    lb.pick(null, Set.of(t(2), t(3))).failure(new ConnectException("refused"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    assertThat(status(lb, t(1)).outReason()).isEqualTo("passive-health");
    assertThat(status(lb, t(1)).ejectedFor()).isEqualTo(Duration.ofSeconds(10));
    ticker.advanceMillis(4_000);
    assertThat(status(lb, t(1)).ejectedFor()).isEqualTo(Duration.ofSeconds(6));
    ticker.advanceMillis(6_000);
    assertThat(status(lb, t(1)).outReason()).isNull(); // on trial now: in service
    assertThat(status(lb, t(1)).ejectedFor()).isEqualTo(Duration.ZERO);
    assertThat(status(lb, t(2)).outReason()).isNull();
  }

  @Test
  void ejectionTime_setsTheFirstEjection_andRepeatsDouble() throws Exception {
    LoadBalancer lb = lb(PassiveHealth.defaults().withEjectionTime(Duration.ofSeconds(3)), t(1), t(2), t(3));
    lb.pick(null, Set.of(t(2), t(3))).failure(new ConnectException("refused"));
    assertThat(status(lb, t(1)).ejectedFor()).isEqualTo(Duration.ofSeconds(3));
    ticker.advanceMillis(3_000);
    lb.pick(null, Set.of(t(2), t(3))).failure(new ConnectException("refused")); // its trial call fails
    assertThat(status(lb, t(1)).ejectedFor()).isEqualTo(Duration.ofSeconds(6));
  }

  @Test
  void ejectionTime_outOfRange_orOnDisabled_isRejectedNamingTheField() {
    assertThatThrownBy(() -> PassiveHealth.defaults().withEjectionTime(Duration.ofMillis(99)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ejectionTime: PT0.099S (expected: 100ms..1h)");
    assertThatThrownBy(() -> PassiveHealth.defaults().withEjectionTime(Duration.ofHours(2)))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("ejectionTime: PT2H (expected: 100ms..1h)");
    assertThatThrownBy(() -> PassiveHealth.disabled().withEjectionTime(Duration.ofSeconds(1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("ejectionTime: cannot be set on PassiveHealth.disabled()");
  }

  @Test
  void panicMode_whileTooFewTargetsAreInService() throws Exception {
    LoadBalancer lb = Fixtures.builder(ticker, 7).targets(t(1), t(2)).strategy(Strategy.roundRobin())
        .passiveHealth(PassiveHealth.defaults().withMaxEjectionPercent(100)).panicThreshold(60).build();
    assertThat(lb.panicMode()).isFalse();
    lb.pick(null, Set.of(t(2))).failure(new ConnectException("refused"));
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED);
    assertThat(lb.panicMode()).isTrue(); // 1 of 2 in service, below 60%
    ticker.advanceMillis(10_000);
    lb.pick(null, Set.of(t(2))).success(); // its trial call
    assertThat(lb.panicMode()).isFalse();
  }

  @Test
  void pickTarget_takesASlotOnThatTarget_evenWhenEjected_andItsOutcomeCounts() throws Exception {
    LoadBalancer lb = lb(PassiveHealth.defaults().withConsecutiveFailures(2), t(1), t(2), t(3));
    Pick first = lb.pick(null, Set.of(t(2), t(3)));
    first.failure(new IOException("503"));
    Pick again = lb.pickTarget(t(1)); // the same-instance retry
    assertThat(again.target()).isEqualTo(t(1));
    assertThat(inFlight(lb, t(1))).isEqualTo(1);
    again.failure(new IOException("503"));
    assertThat(inFlight(lb, t(1))).isZero();
    assertThat(state(lb, t(1))).isEqualTo(TargetState.EJECTED); // two failures in a row

    Pick onEjected = lb.pickTarget(t(1));
    assertThat(inFlight(lb, t(1))).isEqualTo(1);
    onEjected.release();
    assertThat(inFlight(lb, t(1))).isZero();

    assertThatThrownBy(() -> lb.pickTarget(t(9))).isInstanceOf(NoTargetAvailableException.class)
        .hasMessageContaining("target 10.0.0.9:8080 is not one of its targets");
  }
}
