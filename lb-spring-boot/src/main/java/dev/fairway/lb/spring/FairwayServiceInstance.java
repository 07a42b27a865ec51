package dev.fairway.lb.spring;

import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import dev.fairway.lb.internal.OutcomeRule;
import java.net.URI;
import java.util.Map;
import java.util.concurrent.atomic.AtomicIntegerFieldUpdater;
import org.jspecify.annotations.Nullable;
import org.springframework.cloud.client.ServiceInstance;

/**
 * The instance Fairway chose for one call, carrying that call's {@link Pick}. Spring Cloud
 * LoadBalancer hands the chosen instance to every {@code LoadBalancerLifecycle} callback (the
 * blocking client wraps it in a new {@code DefaultResponse}, so the instance, not the response, is
 * what reaches {@code onComplete}), so {@link FairwayLoadBalancerLifecycle} finds the pick here.
 * Every {@link ServiceInstance} method answers as the discovered instance does.
 *
 * <p>One attempt at a time: the first completion of an attempt counts, later ones do nothing. A
 * retry on the same instance (Spring Cloud LoadBalancer's {@code max-retries-on-same-service-instance})
 * reuses this object for its next attempt; {@link #beginAttempt} then takes a new pick on the same
 * target, so that attempt holds its own in-flight slot and its outcome reaches passive health too.
 * Thread-safe (a call's attempts follow one another).
 */
final class FairwayServiceInstance implements ServiceInstance {
  private static final AtomicIntegerFieldUpdater<FairwayServiceInstance> DONE =
      AtomicIntegerFieldUpdater.newUpdater(FairwayServiceInstance.class, "done");

  /** Takes a new pick on the same target for a later attempt; null when none can be taken. */
  @FunctionalInterface
  interface Repick {
    @Nullable Pick pickAgain(Target target);
  }

  private final ServiceInstance delegate;
  private final OutstandingPicks owner;
  private final Repick repick;
  // The current attempt's pick and when it was taken: written before done is reset (volatile), read after.
  private volatile Pick pick;
  volatile long pickedAtNanos;
  private volatile int done;

  FairwayServiceInstance(ServiceInstance delegate, Pick pick, OutstandingPicks owner, long pickedAtNanos,
      Repick repick) {
    this.delegate = delegate;
    this.pick = pick;
    this.owner = owner;
    this.pickedAtNanos = pickedAtNanos;
    this.repick = repick;
  }

  /**
   * Called as an attempt on this instance starts. The first attempt runs on the pick made by the
   * balancer; once an attempt has completed, the next one (a retry on the same instance) gets a new
   * pick on the same target. If none can be had (the target left the list) the attempt goes
   * uncounted, as the instance is Spring's choice, not the balancer's.
   */
  void beginAttempt() {
    if (done == 0) {
      return;
    }
    Pick next = repick.pickAgain(pick.target());
    if (next == null) {
      return;
    }
    pick = next;
    pickedAtNanos = owner.now();
    done = 0;
    owner.add(this);
  }

  Target target() {
    return pick.target();
  }

  ServiceInstance delegate() {
    return delegate;
  }

  void success() {
    if (complete()) {
      pick.success();
    }
  }

  void failure(Throwable cause) {
    if (complete()) {
      pick.failure(cause);
    }
  }

  void release() {
    if (complete()) {
      pick.release();
    }
  }

  /** Releases the pick if nothing completed it; true if this call did. */
  boolean abandon() {
    if (complete()) {
      pick.release();
      return true;
    }
    return false;
  }

  boolean isDone() {
    return done != 0;
  }

  /**
   * Has {@code rule} read the response to the current attempt (status 0 for none, load report header
   * or null): its report reaches the pick, and the result says whether the status is a failure
   * ({@link OutcomeRule#read}). Once the attempt is completed it reads nothing and answers {@link
   * OutcomeRule#SUCCESS}, which the completion that follows ignores.
   */
  int responded(OutcomeRule rule, int status, @Nullable String loadReport) {
    return done != 0 ? OutcomeRule.SUCCESS : rule.read(pick, status, loadReport);
  }

  private boolean complete() {
    if (DONE.compareAndSet(this, 0, 1)) {
      owner.remove(this);
      return true;
    }
    return false;
  }

  @Override
  public @Nullable String getInstanceId() {
    return delegate.getInstanceId();
  }

  @Override
  public String getServiceId() {
    return delegate.getServiceId();
  }

  @Override
  public String getHost() {
    return delegate.getHost();
  }

  @Override
  public int getPort() {
    return delegate.getPort();
  }

  @Override
  public boolean isSecure() {
    return delegate.isSecure();
  }

  @Override
  public URI getUri() {
    return delegate.getUri();
  }

  @Override
  public @Nullable Map<String, String> getMetadata() {
    return delegate.getMetadata();
  }

  @Override
  public @Nullable String getScheme() {
    return delegate.getScheme();
  }

  @Override
  public String toString() {
    return "FairwayServiceInstance{" + pick.target().id() + ", " + delegate + "}";
  }
}
