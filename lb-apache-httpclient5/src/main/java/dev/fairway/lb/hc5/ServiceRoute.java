package dev.fairway.lb.hc5;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.hedging.HedgeMeters;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongSupplier;
import org.jspecify.annotations.Nullable;

/**
 * One logical host: its balancer, its retry budget, its call meters (lb-core's {@link CallMeters},
 * which hold the service's {@code fairway.load.reports} counters and listen to the balancer
 * themselves), its {@link OutcomeRule}, its targets' routes and authorities ({@link
 * TargetRoutes}, the same for the classic and the async client; a departed target's go with it),
 * and its hedging (lb-core's {@link ServiceHedging}, when the client hedges: the classic and the
 * async client race a hedgeable request's first attempt against a hedge, and every attempt on the
 * route tells it when a target answered). Thread-safe.
 */
final class ServiceRoute implements LoadBalancerListener {
  private static final System.Logger LOG = System.getLogger(FairwayHttpClient5.class.getName());

  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  final CallMeters meters;
  final OutcomeRule outcomes;
  final TargetRoutes targets;
  final @Nullable ServiceHedging hedging; // null when the client does not hedge
  private final AtomicBoolean leakLogged = new AtomicBoolean();

  ServiceRoute(String host, LoadBalancer loadBalancer, double percentCanRetry, int minRetriesPerSecond,
      LongSupplier ticker, int[] failureStatusCodes) {
    this(host, loadBalancer, percentCanRetry, minRetriesPerSecond, ticker, failureStatusCodes, null);
  }

  /** With {@code hedger}'s hedging of this service when not null; the hedges draw on this route's budget too. */
  ServiceRoute(String host, LoadBalancer loadBalancer, double percentCanRetry, int minRetriesPerSecond,
      LongSupplier ticker, int[] failureStatusCodes, @Nullable Hedger hedger) {
    this.host = host;
    this.loadBalancer = loadBalancer;
    this.budget = new AttemptBudget(percentCanRetry, minRetriesPerSecond, ticker);
    this.meters = CallMeters.of(loadBalancer);
    this.outcomes = new OutcomeRule(failureStatusCodes, meters.loadReports());
    this.targets = new TargetRoutes(host);
    this.hedging = hedger == null ? null : hedgingOf(host, loadBalancer, budget, hedger);
    loadBalancer.addListener(this); // lives as long as the balancer, as the client's handler may
  }

  private static ServiceHedging hedgingOf(String host, LoadBalancer loadBalancer, AttemptBudget budget, Hedger hedger) {
    HedgeMeters hedgeMeters = HedgeMeters.of(loadBalancer);
    ServiceHedging hedging = hedger.forService(host, loadBalancer, hedgeMeters, budget);
    hedgeMeters.hedging(hedging);
    // Lives as long as the balancer (a client has no close that would reach here): a target that
    // leaves takes its held losing copies with it, and nothing held outlives the balancer.
    loadBalancer.addListener(new LoadBalancerListener() {
      @Override
      public void targetRemoved(Target target) {
        hedging.targetRemoved(target);
      }

      @Override
      public void closed() {
        hedgeMeters.closed();
        hedging.closed();
      }
    });
    return hedging;
  }

  /**
   * A call of this service begins: it pays into the retry budget, and into hedging's counts and
   * budget when the service hedges ({@code hedgeable}: this call may get a hedge).
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
    targets.forget(target);
  }

  @Override
  public void closed() {
    targets.clear();
  }

  /** A response entity became unreachable unclosed and its slot was freed: counted, and logged once per service. */
  void leaked(Target target) {
    meters.leaked();
    if (leakLogged.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, "A response from " + host + " (target " + target.id() + ") was leaked. "
          + "Did you forget to close a response or consume its entity? Its in-flight slot on the target was held "
          + "until now; fairway.leaked.responses counts every such response (this message is logged once per service)");
    }
  }
}
