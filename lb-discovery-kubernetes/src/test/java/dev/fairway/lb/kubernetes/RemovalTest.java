package dev.fairway.lb.kubernetes;

import static org.assertj.core.api.Assertions.assertThat;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Strategy;
import dev.fairway.lb.TargetStatus;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec;
import dev.fairway.lb.kubernetes.fake.EndpointSliceSpec.Endpoint;
import dev.fairway.lb.kubernetes.fake.FakeKubernetes;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * An endpoint that leaves the slices takes no new picks, and the pick already holding it completes: the
 * balancer drops it from selection, not the calls in flight.
 */
class RemovalTest {
  @Test
  void aRemovedEndpoint_takesNoNewPicks_andItsPickInFlightCompletes() throws Exception {
    try (FakeKubernetes fake = FakeKubernetes.start()) {
      fake.apply("shop", EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
          .endpoint(Endpoint.readyPod("10.0.0.1", "o-1", "z1")).endpoint(Endpoint.readyPod("10.0.0.2", "o-2", "z1")));
      try (KubernetesTargetSource source = KubernetesTargetSource.builder("orders").environment(Map.of())
              .apiServer(fake.url()).namespace("shop").backoff(Duration.ofMillis(20), Duration.ofMillis(200)).build();
          LoadBalancer lb = LoadBalancer.builder("orders").targets(source).strategy(Strategy.roundRobin()).build()) {
        source.whenReady().get(20, TimeUnit.SECONDS);
        Lists.await("two targets", () -> lb.status().size() == 2);
        Pick held = lb.pick();
        String leaving = held.target().id();
        String staying = leaving.equals("10.0.0.1:8080") ? "10.0.0.2:8080" : "10.0.0.1:8080";
        String stayingIp = staying.substring(0, staying.indexOf(':'));
        fake.apply("shop", EndpointSliceSpec.of("orders-a", "orders").port("http", 8080)
            .endpoint(Endpoint.readyPod(stayingIp, "o-x", "z1")));
        Lists.await("the balancer without " + leaving,
            () -> lb.status().stream().noneMatch(s -> s.target().id().equals(leaving)));
        for (int i = 0; i < 100; i++) {
          Pick p = lb.pick();
          assertThat(p.target().id()).isEqualTo(staying);
          p.success();
        }
        held.success(); // the call in flight finishes and is accounted without error
        assertThat(lb.status()).extracting(TargetStatus::inFlight).containsExactly(0);
      }
    }
  }
}
