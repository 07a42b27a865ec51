package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.Target;
import dev.fairway.lb.TargetStatus;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.actuate.endpoint.annotation.ReadOperation;
import org.springframework.boot.actuate.endpoint.annotation.Selector;

/**
 * The actuator endpoint {@code fairway}: every running balancer (each service under
 * {@code fairway.services} from startup on, any other once it made its first call) with its
 * strategy, whether it is in panic mode, how old its instance list is, and its targets with their
 * state (HEALTHY, WARMING, EJECTED, UNHEALTHY), why and until when a target is out, its share of
 * this client's subset, calls in flight, latency average and the load they last reported, as
 * {@link LoadBalancer#status()} gives them. {@code GET /actuator/fairway} lists every balancer,
 * {@code GET /actuator/fairway/orders} one. Expose it as any endpoint, e.g.
 * {@code management.endpoints.web.exposure.include=health,fairway}.
 *
 * <pre>{@code
 * {"balancers": {"orders": {"service": "orders", "strategy": "least-queueing", "panic": false,
 *   "discovery": {"instances": 2, "listAgeSeconds": 12.5},
 *   "targets": [
 *   {"id": "i0", "host": "10.0.0.1", "port": 8080, "zone": "", "weight": 1, "state": "HEALTHY",
 *    "outReason": null, "outUntil": null, "subsetShare": 1.0,
 *    "inFlight": 2, "latencyEwmaMillis": 12.5, "reportedUtilization": null, "reportedInFlight": null},
 *   {"id": "i1", "host": "10.0.0.2", "port": 8080, "zone": "", "weight": 1, "state": "EJECTED",
 *    "outReason": "passive-health", "outUntil": "2026-12-02T07:30:10Z", "subsetShare": 1.0, ...}]}}}
 * }</pre>
 *
 * {@code outReason} is {@code passive-health} (ejected after failed calls, until {@code outUntil}),
 * {@code active-health} (its health checks fail) or {@code discovery} (discovery marks it
 * unhealthy), the last two without an end time. {@code listAgeSeconds} is how long ago the current
 * instance list arrived from discovery (through Spring Cloud LoadBalancer's cache, if it has one),
 * null before the first. A reported value is null when the target sent no fresh report; the latency
 * average is 0 before the first completed call.
 */
@Endpoint(id = "fairway")
public final class FairwayEndpoint {
  private final FairwayBalancers balancers;
  private final Clock clock;

  FairwayEndpoint(FairwayBalancers balancers) {
    this(balancers, Clock.systemUTC());
  }

  FairwayEndpoint(FairwayBalancers balancers, Clock clock) {
    this.balancers = balancers;
    this.clock = clock;
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

  private Map<String, Object> describe(LoadBalancer lb) {
    Instant now = clock.instant();
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
      m.put("outReason", s.outReason());
      Duration ejected = s.ejectedFor();
      m.put("outUntil", ejected.isZero() ? null : now.plus(ejected).toString());
      m.put("subsetShare", s.subsetShare());
      m.put("inFlight", s.inFlight());
      m.put("latencyEwmaMillis", finiteOrNull(s.latencyEwmaMillis()));
      m.put("reportedUtilization", finiteOrNull(s.reportedUtilization()));
      m.put("reportedInFlight", finiteOrNull(s.reportedInFlight()));
      targets.add(m);
    }
    Map<String, Object> out = new LinkedHashMap<>();
    out.put("service", lb.service());
    out.put("strategy", lb.strategy().name());
    out.put("panic", lb.panicMode());
    InstanceTargets instances = balancers.instancesOf(lb);
    if (instances != null) {
      Map<String, Object> discovery = new LinkedHashMap<>();
      long age = instances.listAgeNanos();
      discovery.put("instances", instances.listSize());
      discovery.put("listAgeSeconds", age < 0 ? null : Math.round(age / 1e6) / 1e3);
      out.put("discovery", discovery);
    }
    out.put("targets", targets);
    return out;
  }

  private static @Nullable Double finiteOrNull(double value) {
    return Double.isFinite(value) ? value : null;
  }
}
