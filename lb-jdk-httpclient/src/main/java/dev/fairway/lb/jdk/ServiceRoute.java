package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.LoadReportMeters;
import dev.fairway.lb.internal.OutcomeRule;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One logical host of a {@link FairwayHttpClient}: its balancer, its retry budget, the rule that
 * turns a response into its pick's outcome, and its targets' URIs. Holds the service's load-report
 * meters until the balancer closes; a departed target's URIs go with it. Thread-safe.
 */
final class ServiceRoute implements LoadBalancerListener {
  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  final OutcomeRule outcomes;
  final TargetUris uris = new TargetUris();
  private final LoadReportMeters reportMeters;
  private final AtomicBoolean released = new AtomicBoolean();

  ServiceRoute(String host, LoadBalancer loadBalancer, AttemptBudget budget, int[] failureStatusCodes) {
    this.host = host;
    this.loadBalancer = loadBalancer;
    this.budget = budget;
    this.reportMeters = LoadReportMeters.acquire(loadBalancer.meterRegistry().orElse(null), loadBalancer.service());
    this.outcomes = new OutcomeRule(failureStatusCodes, reportMeters);
    loadBalancer.addListener(this); // lives as long as the balancer: a client has no close of its own to rely on
  }

  @Override
  public void targetRemoved(Target target) {
    uris.forget(target);
  }

  @Override
  public void closed() {
    uris.clear();
    if (released.compareAndSet(false, true)) {
      reportMeters.release();
    }
  }
}
