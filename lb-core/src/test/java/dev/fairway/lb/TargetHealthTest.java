package dev.fairway.lb;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.TargetHealth.Event;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The per-target health state machine alone: exact phases and transitions on fake time. */
class TargetHealthTest {
  static final long S = 1_000_000_000L;
  final TargetHealth.Rules rules = new TargetHealth.Rules(new SlowStart(10 * S), PassiveHealth.defaults(),
      ActiveHealth.of(t -> true, Duration.ofSeconds(1)).withHealthyThreshold(2).withUnhealthyThreshold(2));
  final List<String> transitions = new ArrayList<>();

  TrackedTarget target(TargetHealth.State initial) {
    return new TrackedTarget(Fixtures.t(1), new TargetHealth(rules, initial), null);
  }

  void apply(TrackedTarget t, Event e, long now) {
    HealthTransition moved = t.health.apply(t, e, now, null);
    if (moved != null) {
      transitions.add(moved.from + "->" + moved.to);
    }
  }

  @Test
  void ejection_endsInATrial_andASuccessfulTrialWarmsUpToHealthy() {
    TrackedTarget t = target(TargetHealth.State.joined(false, true, 0, rules.slowStart));
    apply(t, Event.EJECT, 0);
    assertThat(t.health.phaseAt(10 * S - 1)).isEqualTo(HealthPhase.EJECTED);
    assertThat(t.health.phaseAt(10 * S)).isEqualTo(HealthPhase.HALF_OPEN); // read current, changed nothing
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.EJECTED);
    apply(t, Event.TIME, 10 * S);
    apply(t, Event.TRIAL_SUCCEEDED, 11 * S);
    assertThat(t.health.stateAt(15 * S)).isEqualTo(TargetState.WARMING); // warming since the ejection ended
    assertThat(t.health.stateAt(20 * S)).isEqualTo(TargetState.HEALTHY);
    apply(t, Event.TIME, 20 * S);
    assertThat(transitions).containsExactly("HEALTHY->EJECTED", "EJECTED->HALF_OPEN", "HALF_OPEN->WARMING",
        "WARMING->HEALTHY");
  }

  @Test
  void repeatedEjections_doubleInLength_andARestoreStartsAgainAtTheFirst() {
    TrackedTarget t = target(TargetHealth.State.joined(false, true, 0, rules.slowStart));
    apply(t, Event.EJECT, 0);
    assertThat(t.health.state().ejectedUntilNanos).isEqualTo(10 * S);
    apply(t, Event.EJECT, 10 * S); // the trial failed
    assertThat(t.health.state().ejectedUntilNanos).isEqualTo(30 * S);
    apply(t, Event.TRIAL_SUCCEEDED, 30 * S);
    apply(t, Event.EJECT, 50 * S);
    assertThat(t.health.state().ejectedUntilNanos).isEqualTo(60 * S);
  }

  @Test
  void trialPermits_areThePermittedHalfOpenCalls_andOnlyWhileHalfOpen() {
    TrackedTarget t = target(TargetHealth.State.joined(false, true, 0, rules.slowStart));
    assertThat(t.health.tryBeginTrial()).isZero();
    apply(t, Event.EJECT, 0);
    apply(t, Event.TIME, 10 * S);
    assertThat(List.of(t.health.tryBeginTrial(), t.health.tryBeginTrial(), t.health.tryBeginTrial(),
        t.health.tryBeginTrial())).containsExactly(1, 1, 1, -1);
    t.health.endTrial();
    assertThat(t.health.tryBeginTrial()).isEqualTo(1);
  }

  @Test
  void probes_needTheirThresholdInARow_andAPassingRunAfterAFailingOneEndsAnEjectionEarly() {
    TrackedTarget t = target(TargetHealth.State.joined(false, true, 0, rules.slowStart));
    apply(t, Event.PROBE_FAILED, 1);
    apply(t, Event.PROBE_PASSED, 2);
    apply(t, Event.PROBE_FAILED, 3);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.HEALTHY);
    apply(t, Event.PROBE_FAILED, 4);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.UNHEALTHY);
    apply(t, Event.PROBE_PASSED, 5);
    apply(t, Event.PROBE_PASSED, 6);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.WARMING);
    apply(t, Event.EJECT, 7);
    apply(t, Event.PROBE_FAILED, 8);
    apply(t, Event.PROBE_FAILED, 9); // the probes see it down too: a process, not just its calls
    apply(t, Event.PROBE_PASSED, 10);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.EJECTED);
    apply(t, Event.PROBE_PASSED, 11);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.HALF_OPEN);
    assertThat(transitions).containsExactly("HEALTHY->UNHEALTHY", "UNHEALTHY->WARMING", "WARMING->EJECTED",
        "EJECTED->HALF_OPEN");
  }

  /** Regression (lab fastfail): 503s on the service port, health port fine; probes kept ending the ejection. */
  @Test
  void passingProbes_doNotEndAnEjectionTheyNeverSawFail_onlyItsTimerAndATrialDo() {
    TrackedTarget t = target(TargetHealth.State.joined(false, true, 0, rules.slowStart));
    apply(t, Event.EJECT, 0);
    for (long s = 1; s < 10; s++) {
      apply(t, Event.PROBE_PASSED, s * S);
      assertThat(t.health.state().phase).isEqualTo(HealthPhase.EJECTED);
    }
    assertThat(t.health.phaseAt(10 * S - 1)).isEqualTo(HealthPhase.EJECTED);
    apply(t, Event.TIME, 10 * S);
    apply(t, Event.EJECT, 10 * S + 1); // the trial got a 503 again
    apply(t, Event.PROBE_PASSED, 11 * S);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.EJECTED);
    assertThat(t.health.state().ejectedUntilNanos).isEqualTo(30 * S + 1);
    assertThat(transitions).containsExactly("HEALTHY->EJECTED", "EJECTED->HALF_OPEN", "HALF_OPEN->EJECTED");
  }

  @Test
  void sourceUnhealthy_isUnhealthyUntilTheSourceSaysOtherwise_evenAfterATrial() {
    TrackedTarget t = target(TargetHealth.State.joined(false, false, 0, rules.slowStart));
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.UNHEALTHY);
    apply(t, Event.EJECT, 0); // in panic mode it takes calls, and may be ejected
    apply(t, Event.TRIAL_SUCCEEDED, 10 * S);
    assertThat(t.health.state().phase).isEqualTo(HealthPhase.UNHEALTHY);
    apply(t, Event.SOURCE_HEALTHY, 11 * S);
    assertThat(t.health.stateAt(11 * S)).isEqualTo(TargetState.WARMING);
  }

  @Test
  void next_isPure_theSameInputsGiveTheSameState_andNoChangeIsTheSameObject() {
    TargetHealth.State s = TargetHealth.State.joined(false, true, 0, rules.slowStart);
    assertThat(TargetHealth.next(s, Event.TIME, 5 * S, rules)).isSameAs(s);
    assertThat(TargetHealth.next(s, Event.TRIAL_SUCCEEDED, 5 * S, rules)).isSameAs(s);
    TargetHealth.State a = TargetHealth.next(s, Event.EJECT, 5 * S, rules);
    TargetHealth.State b = TargetHealth.next(s, Event.EJECT, 5 * S, rules);
    assertThat(a.phase).isEqualTo(b.phase).isEqualTo(HealthPhase.EJECTED);
    assertThat(a.ejectedUntilNanos).isEqualTo(b.ejectedUntilNanos).isEqualTo(15 * S);
    assertThat(s.phase).isEqualTo(HealthPhase.HEALTHY);
  }
}
