package dev.fairway.lb.okhttp;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.LoadBalancerListener;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.AttemptBudget;
import dev.fairway.lb.internal.CallMeters;
import dev.fairway.lb.internal.OutcomeRule;
import dev.fairway.lb.internal.hedging.Hedger;
import dev.fairway.lb.internal.hedging.ServiceHedging;
import java.util.concurrent.atomic.AtomicBoolean;
import okhttp3.HttpUrl;
import org.jspecify.annotations.Nullable;

/**
 * One logical host of an interceptor: its balancer, retry budget, meters, target URLs and hedging. Listens
 * to the balancer so that a departed target's meters and URLs go with it. Thread-safe.
 */
final class ServiceRoute implements LoadBalancerListener {
  private static final System.Logger LOG = System.getLogger(LoadBalancingInterceptor.class.getName());

  final String host;
  final LoadBalancer loadBalancer;
  final AttemptBudget budget;
  /** The service's hedging meters; {@link #meters} are the call meters every client integration shares. */
  final CallMetrics metrics;
  final CallMeters meters;
  /** How a response becomes its attempt's outcome: the interceptor's failure codes, this service's report meters. */
  final OutcomeRule outcomes;
  final TargetUrls urls = new TargetUrls();
  final @Nullable ServiceHedging hedging; // null when the interceptor does not hedge
  private final AtomicBoolean leakLogged = new AtomicBoolean();

  ServiceRoute(String host, LoadBalancer loadBalancer, AttemptBudget budget, CallMetrics metrics,
      @Nullable Hedger hedger, int[] failureStatusCodes) {
    this.host = host;
    this.outcomes = new OutcomeRule(failureStatusCodes, metrics.calls.loadReports());
    this.loadBalancer = loadBalancer;
    this.budget = budget;
    this.metrics = metrics;
    this.meters = metrics.calls; // a listener of the balancer itself
    this.hedging = hedger == null ? null : hedger.forService(host, loadBalancer, metrics.hedges, budget);
    if (hedging != null) {
      metrics.hedges.hedging(hedging);
    }
    loadBalancer.addListener(this); // lives as long as the balancer; an interceptor has no close
  }

  @Override
  public void targetRemoved(Target target) {
    urls.forget(target);
    if (hedging != null) {
      hedging.targetRemoved(target);
    }
  }

  @Override
  public void closed() {
    urls.clear();
    metrics.hedges.closed();
    if (hedging != null) {
      hedging.closed(); // nothing held outlives the balancer
    }
  }

  /**
   * A call of this service begins: it pays into the retry budget, and into hedging's counts and
   * budget when the service hedges.
   */
  void callStarted(boolean hedgeable) {
    budget.deposit();
    if (hedging != null) {
      hedging.callStarted(hedgeable);
    }
  }

  /** Counts a leaked response body; logs the first one, as OkHttp logs its first leaked connection. */
  void leaked(HttpUrl url, Target target) {
    meters.leaked();
    if (leakLogged.compareAndSet(false, true)) {
      LOG.log(System.Logger.Level.WARNING, "A response to " + url + " (target " + target.id() + ") was leaked. "
          + "Did you forget to close a response body? Its in-flight slot on the target was held until now; "
          + "fairway.leaked.responses counts every such response (this message is logged once per service)");
    }
  }
}
