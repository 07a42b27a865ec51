package dev.fairway.lb.spring;

import org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.context.annotation.Bean;

/**
 * The {@code fairway} actuator endpoint, when Spring Boot's actuator is on the classpath. Created,
 * as Boot's own endpoints are, only when it is available: its access is not {@code none}
 * ({@code management.endpoint.fairway.access}, or {@code .enabled} on older lines) and it is
 * exposed, e.g. {@code management.endpoints.web.exposure.include=health,fairway}.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass(value = Endpoint.class,
    name = "org.springframework.boot.actuate.autoconfigure.endpoint.condition.ConditionalOnAvailableEndpoint")
@ConditionalOnBean(FairwayBalancers.class)
public class FairwayEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  @ConditionalOnAvailableEndpoint
  FairwayEndpoint fairwayEndpoint(FairwayBalancers balancers) {
    return new FairwayEndpoint(balancers);
  }
}
