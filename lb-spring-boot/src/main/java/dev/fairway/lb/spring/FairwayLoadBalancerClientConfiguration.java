package dev.fairway.lb.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.loadbalancer.core.ReactorLoadBalancer;
import org.springframework.cloud.loadbalancer.core.ServiceInstanceListSupplier;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.env.Environment;

/**
 * The configuration each Spring Cloud LoadBalancer client context gets by default (registered by
 * {@link FairwayLoadBalancerAutoConfiguration} with {@code @LoadBalancerClients(defaultConfiguration
 * = ...)}): a {@link FairwayReactorLoadBalancer} for the client's service and the
 * {@link FairwayLoadBalancerLifecycle} that reports outcomes to it. The balancer reads the client's
 * {@link ServiceInstanceListSupplier}, or, with {@code fairway.consul.enabled=true}, Consul directly
 * (a {@link TargetFeed} in the application context).
 *
 * <p>It steps aside: a {@link ReactorLoadBalancer} from the client's own
 * {@code @LoadBalancerClient(configuration = ...)}, from another default configuration registered
 * before it, or from the application context keeps its place, as Spring's round robin would. To
 * use Fairway for chosen clients only, set {@code fairway.loadbalancer.enabled=false} and name this
 * class in their {@code @LoadBalancerClient(configuration = ...)}.
 *
 * <p>Not for component scanning: Spring Cloud LoadBalancer instantiates it in each client's context.
 */
@Configuration(proxyBeanMethods = false)
public class FairwayLoadBalancerClientConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean(ReactorLoadBalancer.class)
  ReactorLoadBalancer<ServiceInstance> fairwayReactorLoadBalancer(Environment environment,
      LoadBalancerClientFactory clients, FairwaySettings settings, FairwayBalancers balancers,
      ObjectProvider<MeterRegistry> meters, FairwayProperties properties, ObjectProvider<TargetFeed> feeds) {
    String service = serviceId(environment);
    ServiceSettings serviceSettings = settings.forService(service);
    TargetFeed feed = feeds.getIfAvailable();
    if (feed != null) {
      // fairway.consul.enabled: Consul's watcher feeds the balancer; the supplier is not read.
      return new FairwayReactorLoadBalancer(service, feed, serviceSettings, balancers, meters.getIfUnique(), properties.getLoadbalancer().getAbandonedPickTimeout(),
          System::nanoTime);
    }
    return new FairwayReactorLoadBalancer(service, clients.getLazyProvider(service, ServiceInstanceListSupplier.class),
        serviceSettings, balancers, meters.getIfUnique(),
        properties.getLoadbalancer().getAbandonedPickTimeout(), System::nanoTime);
  }

  @Bean
  @ConditionalOnMissingBean(FairwayLoadBalancerLifecycle.class)
  FairwayLoadBalancerLifecycle fairwayLoadBalancerLifecycle(Environment environment, FairwaySettings settings,
      ObjectProvider<MeterRegistry> meters) {
    String service = serviceId(environment);
    return new FairwayLoadBalancerLifecycle(settings.forService(service), service, meters.getIfUnique());
  }

  private static String serviceId(Environment environment) {
    String name = environment.getProperty(LoadBalancerClientFactory.PROPERTY_NAME);
    if (name == null || name.isBlank()) {
      throw new IllegalStateException(LoadBalancerClientFactory.PROPERTY_NAME
          + " is not set: FairwayLoadBalancerClientConfiguration belongs in a Spring Cloud LoadBalancer client context");
    }
    return name;
  }
}
