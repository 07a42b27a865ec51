package dev.fairway.lb.spring;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.springframework.core.env.Environment;

/**
 * Where every service's balancer gets its targets when it does not read Spring Cloud's discovery:
 * Fairway's own watchers ({@code fairway.consul.enabled=true}, {@link ConsulTargetFeed};
 * {@code fairway.kubernetes.enabled=true}, {@link KubernetesTargetFeed}; {@code fairway.dns.enabled=true},
 * {@link DnsTargetFeed}), at most one of them. Every path
 * asks it: {@link FairwayReactorLoadBalancer} (Spring Cloud LoadBalancer), and {@link PathBalancers}
 * for {@link FairwayOkHttp} and {@link FairwayHttpClient5Path}.
 * No type of an optional library appears here, so the paths can name it whether or not
 * a discovery module is on the classpath. Implementations are thread-safe.
 */
interface TargetFeed {

  /**
   * Starts watching one service for one balancer: the feed's live targets and the subset of its
   * {@code subset.*} settings. The caller closes it with the balancer.
   *
   * @throws FairwayConfigurationException naming the property when the service cannot be fed as configured
   */
  ServiceFeed open(ServiceSettings settings);

  /** How long a balancer waits for the feed's first answer before it picks from what it has. */
  Duration firstReplyTimeout();

  /** The properties that each turn a feed on; at most one may be true. */
  List<String> ENABLED = List.of("fairway.consul.enabled", "fairway.kubernetes.enabled", "fairway.dns.enabled");

  /**
   * Fails startup when more than one feed is turned on: each balancer reads one registry, and which one
   * would win is nothing a reader of the configuration could tell.
   *
   * @throws FairwayConfigurationException naming both properties
   */
  static void requireSingle(Environment environment) {
    List<String> on = new ArrayList<>();
    for (String property : ENABLED) {
      if (Boolean.TRUE.equals(environment.getProperty(property, Boolean.class))) {
        on.add(property);
      }
    }
    if (on.size() > 1) {
      throw new FairwayConfigurationException(on.get(1), String.join("=true and ", on)
          + "=true (expected: at most one target feed; each balancer reads one registry)");
    }
  }
}
