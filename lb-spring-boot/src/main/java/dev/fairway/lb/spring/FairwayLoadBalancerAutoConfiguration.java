package dev.fairway.lb.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.loadbalancer.annotation.LoadBalancerClients;
import org.springframework.cloud.loadbalancer.core.ReactorServiceInstanceLoadBalancer;
import org.springframework.cloud.loadbalancer.support.LoadBalancerClientFactory;

/**
 * Makes Fairway the default balancer of every Spring Cloud LoadBalancer client: {@code @LoadBalanced}
 * {@code RestClient.Builder}, {@code RestTemplate} and {@code WebClient.Builder}, OpenFeign, and
 * {@code LoadBalancerClient} itself, through {@link FairwayLoadBalancerClientConfiguration}. Off
 * without Spring Cloud LoadBalancer on the classpath, and with {@code fairway.loadbalancer.enabled=false}.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass({ReactorServiceInstanceLoadBalancer.class, LoadBalancerClientFactory.class})
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.loadbalancer", name = "enabled", matchIfMissing = true)
@LoadBalancerClients(defaultConfiguration = FairwayLoadBalancerClientConfiguration.class)
public class FairwayLoadBalancerAutoConfiguration {}
