package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ListenerTest {
  @Test
  void listener_isToldOfJoinsLeavesAndClose_inOrder() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2)));
    LoadBalancer lb = LoadBalancer.builder("svc").targets(source).build();
    List<String> events = new ArrayList<>();
    lb.addListener(new LoadBalancerListener() {
      @Override
      public void targetAdded(Target target) {
        events.add("+" + Fixtures.name(target));
      }

      @Override
      public void targetRemoved(Target target) {
        events.add("-" + Fixtures.name(target));
      }

      @Override
      public void closed() {
        events.add("closed");
      }
    });
    source.set(List.of(t(2), t(3)));
    source.set(List.of(t(2), t(3).withWeight(2))); // a changed target is no join or leave
    lb.close();
    assertThat(events).containsExactly("+3", "-1", "closed");
  }

  @Test
  void listener_isToldOfHealthChanges_withTheReason() throws Exception {
    Fixtures.FakeTicker ticker = new Fixtures.FakeTicker();
    LoadBalancer lb = Fixtures.builder(ticker, 1).targets(t(1), t(2)).strategy(Strategy.roundRobin()).build();
    List<String> events = new ArrayList<>();
    lb.addListener(new LoadBalancerListener() {
      @Override
      public void healthChanged(Target target, TargetState previous, TargetState current, String reason) {
        events.add(Fixtures.name(target) + " " + previous + "->" + current + " (" + reason + ")");
      }
    });
    lb.pick(null, java.util.Set.of(t(2))).failure(new java.net.ConnectException("refused"));
    ticker.advanceMillis(10_000);
    lb.pick(null, java.util.Set.of(t(2))).success(); // the pick applies the due trial; the success restores
    assertThat(events).containsExactly("1 HEALTHY->EJECTED (could not connect)",
        "1 EJECTED->HEALTHY (its ejection ended)");
    lb.close();
  }

  @Test
  void failingListener_doesNotStopOthers_andUnregisteredOneHearsNothing() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1)));
    LoadBalancer lb = LoadBalancer.builder("svc").targets(source).build();
    List<String> events = new ArrayList<>();
    lb.addListener(new LoadBalancerListener() {
      @Override
      public void targetAdded(Target target) {
        throw new IllegalStateException("listener bug");
      }
    });
    AutoCloseable handle = lb.addListener(new LoadBalancerListener() {
      @Override
      public void targetAdded(Target target) {
        events.add("+" + Fixtures.name(target));
      }
    });
    source.add(t(2));
    handle.close();
    source.add(t(3));
    assertThat(events).containsExactly("+2");
    assertThat(lb.pick().target()).isIn(t(1), t(2), t(3));
    assertThatThrownBy(() -> lb.addListener(null))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("listener: null (expected: a LoadBalancerListener)");
    lb.close();
  }
}
