package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.net.ConnectException;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

class MetricsTest {
  final SimpleMeterRegistry registry = new SimpleMeterRegistry();

  double targets(String state) {
    return registry.get("fairway.targets").tag("service", "svc").tag("state", state).gauge().value();
  }

  @Test
  void gaugesAndCountersReflectTheBalancer_andRemovedTargetsLoseTheirMeters() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2), t(3)));
    LoadBalancer lb = LoadBalancer.builder("svc").targets(source).strategy(Strategy.roundRobin())
        .meterRegistry(registry).build();
    assertThat(targets("healthy")).isEqualTo(3);
    Pick held = lb.pick(null, Set.of(t(2), t(3)));
    assertThat(registry.get("fairway.inflight").tag("target", t(1).id()).gauge().value()).isEqualTo(1);
    held.failure(new ConnectException("refused"));
    assertThat(targets("healthy")).isEqualTo(2);
    assertThat(targets("ejected")).isEqualTo(1);
    assertThat(registry.get("fairway.ejections").tag("target", t(1).id()).counter().count()).isEqualTo(1);
    assertThat(registry.get("fairway.inflight").tag("target", t(1).id()).gauge().value()).isEqualTo(0);

    source.remove(t(1));
    assertThat(registry.find("fairway.inflight").tag("target", t(1).id()).gauge()).isNull();
    assertThat(registry.find("fairway.ejections").tag("target", t(1).id()).counter()).isNull();
    assertThat(registry.find("fairway.inflight").gauges()).hasSize(2);
    assertThat(targets("ejected")).isEqualTo(0);

    lb.close();
    assertThat(registry.getMeters()).isEmpty();
  }

  @Test
  void noRegistry_noMeters_notEvenInTheGlobalRegistry() throws Exception {
    // Without a registry the balancer registers nothing anywhere; the global one is where a
    // careless default would put them.
    io.micrometer.core.instrument.Metrics.addRegistry(registry);
    try {
      LoadBalancer lb = LoadBalancer.builder("svc").targets(t(1)).build();
      lb.pick().success();
      lb.pick().failure(new ConnectException("refused"));
      assertThat(lb.meterRegistry()).isEmpty();
      assertThat(registry.getMeters()).isEmpty();
      assertThat(io.micrometer.core.instrument.Metrics.globalRegistry.getMeters()).isEmpty();
      lb.close();
    } finally {
      io.micrometer.core.instrument.Metrics.removeRegistry(registry);
    }
  }

  @Test
  void balancerTag_isTheServiceByDefault_orTheGivenName_stableAcrossBuilds() throws Exception {
    LoadBalancer plain = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(registry).build();
    LoadBalancer named = LoadBalancer.builder("svc").name("svc-batch").targets(t(1)).meterRegistry(registry).build();
    assertThat(plain.name()).isEqualTo("svc");
    assertThat(named.name()).isEqualTo("svc-batch");
    assertThat(registry.get("fairway.panic").tag("balancer", "svc").counter()).isNotNull();
    assertThat(registry.get("fairway.panic").tag("balancer", "svc-batch").counter()).isNotNull();
    plain.close();
    named.close();
    assertThat(registry.getMeters()).isEmpty();

    // A restart (a new balancer after the old one closed) carries the same tag: the series go on.
    LoadBalancer again = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(registry).build();
    assertThat(again.name()).isEqualTo("svc");
    again.close();
  }

  @Test
  void balancerTag_secondOpenBalancerOfTheSameName_getsTheLowestFreeSuffix_andClosingRemovesOnlyItsOwn()
      throws Exception {
    LoadBalancer first = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(registry).build();
    LoadBalancer second = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(registry).build();
    LoadBalancer third = LoadBalancer.builder("other").name("svc").targets(t(1)).meterRegistry(registry).build();
    assertThat(List.of(first.name(), second.name(), third.name())).containsExactly("svc", "svc#2", "svc#3");

    second.close();
    assertThat(registry.find("fairway.panic").tag("balancer", "svc#2").counter()).isNull();
    assertThat(registry.find("fairway.panic").tag("balancer", "svc").counter()).isNotNull();
    assertThat(registry.find("fairway.panic").tag("balancer", "svc#3").counter()).isNotNull();
    LoadBalancer fourth = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(registry).build();
    assertThat(fourth.name()).isEqualTo("svc#2");

    // Another registry is another namespace.
    SimpleMeterRegistry elsewhere = new SimpleMeterRegistry();
    LoadBalancer apart = LoadBalancer.builder("svc").targets(t(1)).meterRegistry(elsewhere).build();
    assertThat(apart.name()).isEqualTo("svc");
    for (LoadBalancer lb : List.of(first, third, fourth, apart)) {
      lb.close();
    }
    assertThat(registry.getMeters()).isEmpty();
    assertThat(elsewhere.getMeters()).isEmpty();
  }

  @Test
  void builder_rejectsBadNameAndTargetMeterLimit_namingFieldAndValue() {
    assertThatThrownBy(() -> LoadBalancer.builder("svc").name(" "))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("name: \" \" (expected: a non-blank name)");
    assertThatThrownBy(() -> LoadBalancer.builder("svc").targetMeterLimit(-1))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("targetMeterLimit: -1 (expected: 0..10000)");
    assertThatThrownBy(() -> LoadBalancer.builder("svc").targetMeterLimit(10_001))
        .isInstanceOf(IllegalArgumentException.class).hasMessage("targetMeterLimit: 10001 (expected: 0..10000)");
    assertThatThrownBy(() -> LoadBalancer.builder("svc").name("a").name("b"))
        .isInstanceOf(IllegalStateException.class).hasMessage("name was already set to \"a\"");
  }

  @Test
  void targetMeterLimit_foldsLaterTargetsIntoOther_andALeavingTargetFreesItsSlot() throws Exception {
    MutableTargetSource source = new MutableTargetSource(List.of(t(1), t(2), t(3)));
    LoadBalancer lb = LoadBalancer.builder("svc").targets(source).strategy(Strategy.roundRobin())
        .targetMeterLimit(2).meterRegistry(registry).build();
    assertThat(registry.find("fairway.inflight").gauges()).extracting(g -> g.getId().getTag("target"))
        .containsExactlyInAnyOrder(t(1).id(), t(2).id(), "other");
    assertThat(List.of(lb.targetTag(t(1)), lb.targetTag(t(2)), lb.targetTag(t(3))))
        .containsExactly(t(1).id(), t(2).id(), "other");

    Pick held = lb.pick(null, Set.of(t(1), t(2)));
    assertThat(held.target()).isEqualTo(t(3));
    assertThat(registry.get("fairway.inflight").tag("target", "other").gauge().value()).isEqualTo(1);
    held.failure(new ConnectException("refused"));
    assertThat(registry.get("fairway.ejections").tag("target", "other").counter().count()).isEqualTo(1);
    assertThat(registry.find("fairway.ejections").tag("target", t(3).id()).counter()).isNull();

    source.add(t(4)); // no slot free: folded
    assertThat(lb.targetTag(t(4))).isEqualTo("other");
    source.remove(t(1)); // frees a slot; t(4) stays folded, the next to join takes it
    assertThat(lb.targetTag(t(1))).isEqualTo("other");
    assertThat(registry.find("fairway.inflight").tag("target", t(1).id()).gauge()).isNull();
    assertThat(lb.targetTag(t(4))).isEqualTo("other");
    source.add(t(5));
    assertThat(lb.targetTag(t(5))).isEqualTo(t(5).id());
    assertThat(registry.find("fairway.inflight").gauges()).extracting(g -> g.getId().getTag("target"))
        .containsExactlyInAnyOrder(t(2).id(), t(5).id(), "other");

    source.set(List.of(t(2), t(5))); // the folded ones leave: the shared series stay (and read 0)
    assertThat(registry.get("fairway.inflight").tag("target", "other").gauge().value()).isEqualTo(0);
    assertThat(registry.get("fairway.ejections").tag("target", "other").counter().count()).isEqualTo(1);

    lb.close();
    assertThat(registry.getMeters()).isEmpty();
  }

  @Test
  void targetMeterLimitZero_everyTargetUnderOther() throws Exception {
    LoadBalancer lb = LoadBalancer.builder("svc").targets(t(1), t(2)).targetMeterLimit(0)
        .meterRegistry(registry).build();
    assertThat(registry.find("fairway.inflight").gauges()).extracting(g -> g.getId().getTag("target"))
        .containsExactly("other");
    Pick a = lb.pick();
    Pick b = lb.pick(null, Set.of(a.target()));
    assertThat(registry.get("fairway.inflight").tag("target", "other").gauge().value()).isEqualTo(2);
    a.success();
    b.success();
    lb.close();
    assertThat(registry.getMeters()).isEmpty();
  }

  @Test
  void targetTag_withoutRegistry_isTheId() throws Exception {
    LoadBalancer lb = LoadBalancer.builder("svc").targets(t(1)).targetMeterLimit(0).build();
    assertThat(lb.targetTag(t(1))).isEqualTo(t(1).id());
    assertThat(lb.name()).isEqualTo("svc");
    lb.close();
  }
}
