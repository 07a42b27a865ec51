package dev.fairway.lb.spring;

import java.time.Duration;

/**
 * Where every service's balancer gets its targets when it does not read Spring Cloud's discovery:
 * Fairway's own watcher ({@code fairway.consul.enabled=true}, {@link ConsulTargetFeed}). Both paths
 * ask it: {@link FairwayReactorLoadBalancer} (Spring Cloud LoadBalancer) and {@link FairwayOkHttp}.
 * No type of an optional library appears here, so the paths can name it whether or not
 * lb-discovery-consul is on the classpath. Implementations are thread-safe.
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
}
