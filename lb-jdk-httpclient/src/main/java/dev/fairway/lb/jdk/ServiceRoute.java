package dev.fairway.lb.jdk;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.hedging.HedgeMeters;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import org.jspecify.annotations.Nullable;

/**
 * One logical host of a {@link FairwayHttpClient}: its balancer, its retry budget, its call meters
 * (lb-core's {@link CallMeters}, which hold the service's load-report meters and listen to the
 * balancer themselves), the rule that turns a response into its pick's outcome, its targets'
 * URIs, and its hedging (lb-core's {@link ServiceHedging}, when the client hedges). A departed
 * target's URIs and held losing copies go with it. Thread-safe.
 */
final class ServiceRoute implements LoadBalancerListener {
  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  final CallMeters meters;
  final OutcomeRule outcomes;
  final TargetUris uris = new TargetUris();
  final @Nullable ServiceHedging hedging; // null when the client does not hedge
  private final HedgeMeters hedgeMeters;

  ServiceRoute(String host, LoadBalancer loadBalancer, AttemptBudget budget, int[] failureStatusCodes,
      @Nullable Hedger hedger) {
    this.host = host;
    this.loadBalancer = loadBalancer;
    this.budget = budget;
    this.meters = CallMeters.of(loadBalancer);
    this.outcomes = new OutcomeRule(failureStatusCodes, meters.loadReports());
    this.hedgeMeters = hedger == null ? HedgeMeters.NOOP : HedgeMeters.of(loadBalancer);
    this.hedging = hedger == null ? null : hedger.forService(host, loadBalancer, hedgeMeters, budget);
    if (hedging != null) {
      hedgeMeters.hedging(hedging);
    }
    loadBalancer.addListener(this); // lives as long as the balancer: a client has no close of its own to rely on
  }

  /**
   * A call of this service begins: it pays into the retry budget, and into hedging's counts and
   * budget when the service hedges.
   */
  void callStarted(boolean hedgeable) {
    budget.deposit();
    ServiceHedging h = hedging;
    if (h != null) {
      h.callStarted(hedgeable);
    }
  }

  @Override
  public void targetRemoved(Target target) {
    uris.forget(target);
    ServiceHedging h = hedging;
    if (h != null) {
      h.targetRemoved(target);
    }
  }

  @Override
  public void closed() {
    uris.clear();
    hedgeMeters.closed();
    ServiceHedging h = hedging;
    if (h != null) {
      h.closed(); // nothing held outlives the balancer
    }
  }
}
