package dev.fairway.lb.spring;

import dev.fairway.lb.LoadReportHeader;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
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
 * <p>The first completion counts; later ones (a retry on the same instance reuses this object) do
 * nothing. Thread-safe.
 */
final class FairwayServiceInstance implements ServiceInstance {
  private static final AtomicIntegerFieldUpdater<FairwayServiceInstance> DONE =
      AtomicIntegerFieldUpdater.newUpdater(FairwayServiceInstance.class, "done");

  private final ServiceInstance delegate;
  private final Pick pick;
  private final OutstandingPicks owner;
  final long pickedAtNanos;
  private volatile int done;

  FairwayServiceInstance(ServiceInstance delegate, Pick pick, OutstandingPicks owner, long pickedAtNanos) {
    this.delegate = delegate;
    this.pick = pick;
    this.owner = owner;
    this.pickedAtNanos = pickedAtNanos;
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

  /** Hands the response's load report header (or null) to the pick; does nothing once it is completed. */
  LoadReportHeader.Outcome reportLoad(@Nullable String header) {
    return done != 0 ? LoadReportHeader.Outcome.ABSENT : LoadReportHeader.applyTo(pick, header);
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
