package dev.fairway.lb.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;
import org.springframework.context.annotation.Bean;

/**
 * Makes Fairway the default balancer of every Spring Cloud LoadBalancer client: {@code @LoadBalanced}
 * {@code RestClient.Builder}, {@code RestTemplate} and {@code WebClient.Builder}, OpenFeign, and
 * {@code LoadBalancerClient} itself, through {@link FairwayLoadBalancerClientConfiguration}. Off
 * without Spring Cloud LoadBalancer on the classpath, and with {@code fairway.loadbalancer.enabled=false}.
 *
 * <p>The balancer of every service under {@code fairway.services} is built at startup
 * ({@link FairwayPreparedBalancers}), so it is in {@code /actuator/fairway} before the first call;
 * the service's client, created on its first call as Spring's are, takes it over. Other services'
 * balancers come with their clients.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class, afterName = "dev.fairway.lb.spring.FairwayConsulAutoConfiguration")
@ConditionalOnClass({ReactorServiceInstanceLoadBalancer.class, LoadBalancerClientFactory.class})
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.loadbalancer", name = "enabled", matchIfMissing = true)
@LoadBalancerClients(defaultConfiguration = FairwayLoadBalancerClientConfiguration.class)
public class FairwayLoadBalancerAutoConfiguration {

  @Bean(destroyMethod = "close")
  FairwayPreparedBalancers fairwayPreparedBalancers(FairwaySettings settings, FairwayBalancers balancers,
      ObjectProvider<MeterRegistry> meters, ObjectProvider<DiscoveryClient> discovery, ObjectProvider<TargetFeed> feed) {
    return new FairwayPreparedBalancers(settings, balancers, meters.getIfUnique(), discovery.getIfAvailable(),
        feed.getIfAvailable());
  }
}
