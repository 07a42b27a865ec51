package dev.fairway.lb.spring;

import dev.fairway.lb.LoadBalancer;
import dev.fairway.lb.NoTargetAvailableException;
import dev.fairway.lb.Pick;
import dev.fairway.lb.Target;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.function.LongSupplier;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.cloud.client.DefaultServiceInstance;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.DefaultResponse;
import org.springframework.cloud.client.loadbalancer.EmptyResponse;
import org.springframework.cloud.client.loadbalancer.Request;
import org.springframework.cloud.client.loadbalancer.RequestData;
import org.springframework.cloud.client.loadbalancer.RequestDataContext;
import org.springframework.cloud.client.loadbalancer.Response;
import org.springframework.cloud.client.loadbalancer.RetryableRequestContext;
import org.springframework.cloud.loadbalancer.core.NoopServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import reactor.core.publisher.Mono;

/**
 * Spring Cloud LoadBalancer's balancer for one service, backed by one Fairway {@link LoadBalancer}.
 *
 * <p>Each {@link #choose} reads the service's {@link ServiceInstanceListSupplier} as Spring's own
 * round robin does ({@code get().next()}), hands the list to the Fairway balancer (a no-op while it
 * is the same list object, see {@link InstanceTargets}) and picks. The pick travels inside the
 * returned {@link FairwayServiceInstance}; {@link FairwayLoadBalancerLifecycle} completes it. A
 * retry's request ({@link RetryableRequestContext}) excludes the instance the call tried last; if
 * nothing else is available the retry may go back to it.
 *
 * <p>The supplier's 35 s cache ({@code spring.cloud.loadbalancer.cache.ttl}) is kept: it only
 * delays membership (an instance that joins or is deregistered shows up when the cache expires).
 * Health is Fairway's own: a refused connection ejects its instance at the next pick, and failures
 * eject by passive health, whatever the cached list says. The supplier's request-based variants
 * (hints, request-based sticky sessions) are not consulted; use {@code affinity-header}. A supplier
 * that fails or emits nothing leaves the last list in service.
 *
 * <p>The Fairway balancer of a service under {@code fairway.services} is built at startup
 * ({@link FairwayPreparedBalancers}) and taken over here; any other service's is built with this
 * object. Either way on a source that stays empty until the first list with usable instances (which
 * is then its first list: slow start applies only to instances that join later), and listed in
 * {@link FairwayBalancers} from the start.
 *
 * <p>With {@code fairway.consul.enabled=true} the supplier is not read at all: the balancer is built
 * on a {@link ServiceFeed} (Fairway's own Consul watcher), which pushes every membership and health
 * change as Consul reports it; for a service under {@code fairway.services} that feed, too, is opened
 * at startup and taken over here. Thread-safe.
 */
final class FairwayReactorLoadBalancer implements ReactorServiceInstanceLoadBalancer, AutoCloseable {
  private static final Log LOG = LogFactory.getLog(FairwayReactorLoadBalancer.class);

  private final String service;
  private final @Nullable ObjectProvider<ServiceInstanceListSupplier> suppliers; // null: fed by feed
  private final @Nullable ServiceFeed feed;
  private final Duration firstReplyTimeout;
  private final ServiceSettings settings;
  private final FairwayBalancers registry;
  private final InstanceTargets targets;
  private final OutstandingPicks outstanding;
  private final LoadBalancer balancer;
  private volatile @Nullable ServiceInstanceListSupplier supplier;

  FairwayReactorLoadBalancer(String service, ObjectProvider<ServiceInstanceListSupplier> suppliers,
      ServiceSettings settings, FairwayBalancers registry, @Nullable MeterRegistry meters, Duration abandonedPickTimeout,
      LongSupplier ticker) {
    this.service = service;
    this.suppliers = suppliers;
    this.feed = null;
    this.firstReplyTimeout = Duration.ZERO;
    this.settings = settings;
    this.registry = registry;
    this.outstanding = new OutstandingPicks(service, abandonedPickTimeout.toNanos(), ticker, meters);
    FairwayBalancers.Prepared prepared = registry.claim(service);
    InstanceTargets preparedTargets = prepared == null ? null : prepared.instances();
    if (prepared != null && preparedTargets != null) { // under fairway.services: built at startup
      this.targets = preparedTargets;
      this.balancer = prepared.balancer();
      return;
    }
    if (prepared != null) { // prepared on a feed, which this balancer does not read: not ours to use
      prepared.close(registry, service);
    }
    this.targets = new InstanceTargets(service, meters, ticker);
    this.balancer = build(service, settings, targets, meters);
    registry.register(service, balancer, targets);
  }

  /**
   * A balancer fed by {@code feeds} (Fairway's own Consul watcher) instead of a supplier: the one
   * prepared at startup for a service under {@code fairway.services}, else one built now on a feed
   * opened for it, so membership and health changes reach it as the feed sees them. A {@link #choose}
   * before the feed's first answer waits for it up to {@code firstReplyTimeout}. The feed is closed
   * on {@link #close()}.
   */
  FairwayReactorLoadBalancer(String service, TargetFeed feeds, ServiceSettings settings,
      FairwayBalancers registry, @Nullable MeterRegistry meters, Duration abandonedPickTimeout, LongSupplier ticker) {
    this.service = service;
    this.suppliers = null;
    this.firstReplyTimeout = feeds.firstReplyTimeout();
    this.settings = settings;
    this.registry = registry;
    this.targets = new InstanceTargets(service, meters, ticker); // maps a fed target to the instance Spring calls
    this.outstanding = new OutstandingPicks(service, abandonedPickTimeout.toNanos(), ticker, meters);
    FairwayBalancers.Prepared prepared = registry.claim(service);
    ServiceFeed preparedFeed = prepared == null ? null : prepared.feed();
    if (prepared != null && preparedFeed != null) {
      this.feed = preparedFeed;
      this.balancer = prepared.balancer();
      return;
    }
    if (prepared != null) { // prepared on Spring's discovery, which this balancer does not read
      prepared.close(registry, service);
    }
    ServiceFeed opened = feeds.open(settings);
    this.feed = opened;
    this.balancer = build(service, settings, opened, meters);
    registry.register(service, balancer, null);
  }

  /**
   * A Fairway balancer on a source that is empty until the first list, so it is listed (and its
   * meters exist) from the start; the first list with targets is still its first (no slow start).
   */
  static LoadBalancer build(String service, ServiceSettings settings, InstanceTargets targets,
      @Nullable MeterRegistry meters) {
    LoadBalancer.Builder b = settings.configure(LoadBalancer.builder(service)).targets(targets.sourceOrEmpty());
    if (meters != null) {
      b.meterRegistry(meters);
    }
    return b.build();
  }

  /** A Fairway balancer on {@code feed}'s live targets (and subset); closes the feed if the build fails. */
  static LoadBalancer build(String service, ServiceSettings settings, ServiceFeed feed, @Nullable MeterRegistry meters) {
    try {
      LoadBalancer.Builder b = feed.apply(settings.configure(LoadBalancer.builder(service)));
      if (meters != null) {
        b.meterRegistry(meters);
      }
      return b.build();
    } catch (RuntimeException e) {
      feed.close();
      throw e;
    }
  }

  @Override
  @SuppressWarnings("rawtypes") // the interface's own signature
  public Mono<Response<ServiceInstance>> choose(Request request) {
    ServiceFeed f = feed;
    if (f != null) {
      if (f.isReady()) {
        return Mono.fromSupplier(() -> respond(request));
      }
      // Before Consul's first answer: wait for it (bounded, and cancelled with the caller), then pick.
      return Mono.fromFuture(f.whenReady())
          .timeout(firstReplyTimeout)
          .then(Mono.fromSupplier(() -> respond(request)))
          .onErrorResume(e -> Mono.fromSupplier(() -> respond(request)));
    }
    ServiceInstanceListSupplier s = supplier();
    return s.get()
        .next()
        .map(instances -> {
          update(instances);
          return respond(request);
        })
        .onErrorResume(e -> {
          LOG.warn("Fairway: the instance list of " + service + " failed; picking from the last one", e);
          return Mono.fromSupplier(() -> respond(request));
        })
        .switchIfEmpty(Mono.fromSupplier(() -> respond(request)));
  }

  private ServiceInstanceListSupplier supplier() {
    ServiceInstanceListSupplier s = supplier;
    if (s == null) {
      ObjectProvider<ServiceInstanceListSupplier> p = suppliers;
      s = p == null ? new NoopServiceInstanceListSupplier() : p.getIfAvailable(NoopServiceInstanceListSupplier::new);
      supplier = s;
    }
    return s;
  }

  void update(List<ServiceInstance> instances) {
    targets.update(instances);
  }

  @SuppressWarnings("rawtypes")
  Response<ServiceInstance> respond(Request request) {
    LoadBalancer lb = balancer;
    long now = outstanding.now();
    outstanding.maybeSweep(now);
    Object context = request == null ? null : request.getContext();
    String key = affinityKey(context);
    Set<Target> exclude = excluded(context);
    Pick pick;
    try {
      pick = lb.pick(key, exclude);
    } catch (NoTargetAvailableException e) {
      if (exclude == null) {
        LOG.debug("Fairway: " + e.getMessage());
        return new EmptyResponse();
      }
      try {
        pick = lb.pick(key, null); // a retry with nothing else left may go back where it was
      } catch (NoTargetAvailableException again) {
        LOG.debug("Fairway: " + again.getMessage());
        return new EmptyResponse();
      }
    }
    FairwayServiceInstance chosen =
        new FairwayServiceInstance(instanceOf(pick.target()), pick, outstanding, now, this::pickAgain);
    outstanding.add(chosen);
    return new DefaultResponse(chosen);
  }

  /** The instance Spring's clients call: the discovered one, or for a fed target one made from it. */
  private ServiceInstance instanceOf(Target target) {
    if (feed == null) {
      return targets.instanceOf(target);
    }
    // Spring Cloud Consul registers an https instance with Meta secure=true; the same key marks it here.
    boolean secure = Boolean.parseBoolean(target.metadata().get("secure"));
    return new DefaultServiceInstance(target.id(), service, target.host(), target.port(), secure, target.metadata());
  }

  /** A new pick on {@code target} for a retry on the same instance; null if it is no longer a target. */
  private @Nullable Pick pickAgain(Target target) {
    try {
      return balancer.pickTarget(target);
    } catch (NoTargetAvailableException e) {
      LOG.debug("Fairway: a retry on " + target.id() + " goes uncounted: " + e.getMessage());
      return null;
    }
  }

  private @Nullable String affinityKey(@Nullable Object context) {
    String header = settings.affinityHeader;
    if (header == null || !(context instanceof RequestDataContext data)) {
      return null;
    }
    RequestData request = data.getClientRequest();
    return request == null || request.getHeaders() == null ? null : request.getHeaders().getFirst(header);
  }

  private @Nullable Set<Target> excluded(@Nullable Object context) {
    if (!(context instanceof RetryableRequestContext retry)) {
      return null;
    }
    ServiceInstance previous = retry.getPreviousServiceInstance();
    if (previous == null) {
      return null;
    }
    Target t = previous instanceof FairwayServiceInstance f ? f.target()
        : feed == null ? targets.targetOf(previous) : fedTarget(previous);
    return t == null ? null : Set.of(t);
  }

  private @Nullable Target fedTarget(ServiceInstance instance) {
    ServiceFeed f = feed;
    if (f == null) {
      return null;
    }
    String id = InstanceTargets.idOf(instance);
    for (Target t : f.source().targets()) {
      if (t.id().equals(id)) {
        return t;
      }
    }
    return null;
  }

  String service() {
    return service;
  }

  ServiceSettings settings() {
    return settings;
  }

  /** The Fairway balancer. */
  LoadBalancer balancer() {
    return balancer;
  }

  OutstandingPicks outstanding() {
    return outstanding;
  }

  @Override
  public void close() {
    outstanding.releaseAll();
    registry.unregister(service, balancer);
    balancer.close();
    ServiceFeed f = feed;
    if (f != null) {
      f.close();
    }
  }

  @Override
  public String toString() {
    return "FairwayReactorLoadBalancer{" + service + ", " + balancer + "}";
  }
}
