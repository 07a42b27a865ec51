package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The actuator endpoint {@code fairway}: every running balancer's targets with their state
 * (HEALTHY, WARMING, EJECTED, UNHEALTHY), calls in flight, latency average and the load they last
 * reported, as {@link LoadBalancer#status()} gives them. {@code GET /actuator/fairway} lists every
 * balancer, {@code GET /actuator/fairway/orders} one. Expose it as any endpoint, e.g.
 * {@code management.endpoints.web.exposure.include=health,fairway}.
 *
 * <pre>{@code
 * {"balancers": {"orders": {"strategy": "least-queueing", "targets": [
 *   {"id": "i0", "host": "10.0.0.1", "port": 8080, "zone": "", "weight": 1, "state": "HEALTHY",
 *    "inFlight": 2, "latencyEwmaMillis": 12.5, "reportedUtilization": null, "reportedInFlight": null}]}}}
 * }</pre>
 *
 * A reported value is null when the target sent no fresh report; the latency average is 0 before the
 * first completed call.
 */
@Endpoint(id = "fairway")
public final class FairwayEndpoint {
  private final FairwayBalancers balancers;

  FairwayEndpoint(FairwayBalancers balancers) {
    this.balancers = balancers;
  }

  @ReadOperation
  public Map<String, Object> balancers() {
    Map<String, Object> out = new LinkedHashMap<>();
    balancers.balancers().forEach((name, lb) -> out.put(name, describe(lb)));
    return Map.of("balancers", out);
  }

  @ReadOperation
  public @Nullable Map<String, Object> balancer(@Selector String name) {
    LoadBalancer lb = balancers.balancers().get(name);
    return lb == null ? null : describe(lb);
  }

  private static Map<String, Object> describe(LoadBalancer lb) {
    List<Map<String, Object>> targets = new ArrayList<>();
    for (TargetStatus s : lb.status()) {
      Target t = s.target();
      Map<String, Object> m = new LinkedHashMap<>();
      m.put("id", t.id());
      m.put("host", t.host());
      m.put("port", t.port());
      m.put("zone", t.zone());
      m.put("weight", t.weight());
      m.put("state", s.state().name());
      m.put("inFlight", s.inFlight());
      m.put("latencyEwmaMillis", finiteOrNull(s.latencyEwmaMillis()));
      m.put("reportedUtilization", finiteOrNull(s.reportedUtilization()));
      m.put("reportedInFlight", finiteOrNull(s.reportedInFlight()));
      targets.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("service", lb.service());
    out.put("strategy", lb.strategy().name());
    out.put("targets", targets);
    return out;
  }

  private static @Nullable Double finiteOrNull(double value) {
    return Double.isFinite(value) ? value : null;
  }
}
