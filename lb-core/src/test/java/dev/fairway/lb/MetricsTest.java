package dev.fairway.lb;

import static dev.fairway.lb.Fixtures.t;
import static org.assertj.core.api.Assertions.assertThat;

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
}
