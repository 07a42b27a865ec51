package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;

/**
 * One logical host of a {@link FairwayHttpClient}: its balancer, its retry budget, its call meters
 * (lb-core's {@link CallMeters}, which hold the service's load-report meters and listen to the
 * balancer themselves), the rule that turns a response into its pick's outcome, and its targets'
 * URIs. A departed target's URIs go with it. Thread-safe.
 */
final class ServiceRoute implements LoadBalancerListener {
  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  final CallMeters meters;
  final OutcomeRule outcomes;
  final TargetUris uris = new TargetUris();

  ServiceRoute(String host, LoadBalancer loadBalancer, AttemptBudget budget, int[] failureStatusCodes) {
    this.host = host;
    this.loadBalancer = loadBalancer;
    this.budget = budget;
    this.meters = CallMeters.of(loadBalancer);
    this.outcomes = new OutcomeRule(failureStatusCodes, meters.loadReports());
    loadBalancer.addListener(this); // lives as long as the balancer: a client has no close of its own to rely on
  }

  @Override
  public void targetRemoved(Target target) {
    uris.forget(target);
  }

  @Override
  public void closed() {
    uris.clear();
  }
}
