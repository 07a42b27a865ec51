package dev.fairway.lb.spring;

import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.SmartInitializingSingleton;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.client.ServiceInstance;
import org.springframework.cloud.client.loadbalancer.reactive.ReactiveLoadBalancer;
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
 * <p>The client of every service under {@code fairway.services} is created at startup, once every
 * singleton exists, and reads its instance list then (without waiting for it): its balancer is in
 * {@code /actuator/fairway} before the first call, and the first call does not pay for the
 * client's context. Other services' clients are created on their first call, as Spring's are.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass({ReactorServiceInstanceLoadBalancer.class, LoadBalancerClientFactory.class})
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.loadbalancer", name = "enabled", matchIfMissing = true)
@LoadBalancerClients(defaultConfiguration = FairwayLoadBalancerClientConfiguration.class)
public class FairwayLoadBalancerAutoConfiguration {

  @Bean
  static SmartInitializingSingleton fairwayConfiguredClients(ObjectProvider<LoadBalancerClientFactory> clients,
      ObjectProvider<FairwaySettings> settings) {
    return () -> {
      LoadBalancerClientFactory factory = clients.getIfAvailable();
      FairwaySettings configured = settings.getIfAvailable();
      if (factory == null || configured == null) {
        return;
      }
      for (String service : configured.named().keySet()) {
        ReactiveLoadBalancer<ServiceInstance> balancer = factory.getInstance(service);
        if (balancer instanceof FairwayReactorLoadBalancer fairway) {
          fairway.readInstances();
        }
      }
    };
  }
}
