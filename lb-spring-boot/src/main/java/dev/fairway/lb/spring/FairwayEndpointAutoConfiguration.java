package dev.fairway.lb.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.actuate.endpoint.annotation.Endpoint;
import org.springframework.context.annotation.Bean;

/**
 * The {@code fairway} actuator endpoint, when Spring Boot's actuator is on the classpath. Exposed
 * like any endpoint ({@code management.endpoints.web.exposure.include}); off with
 * {@code management.endpoint.fairway.enabled=false} as well as by leaving it unexposed.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass(Endpoint.class)
@ConditionalOnBean(FairwayBalancers.class)
@ConditionalOnProperty(prefix = "management.endpoint.fairway", name = "enabled", matchIfMissing = true)
public class FairwayEndpointAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean
  FairwayEndpoint fairwayEndpoint(FairwayBalancers balancers) {
    return new FairwayEndpoint(balancers);
  }
}
