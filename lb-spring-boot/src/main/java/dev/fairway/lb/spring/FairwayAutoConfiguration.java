package dev.fairway.lb.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import org.springframework.core.env.Environment;

/**
 * Fairway's shared part: the {@code fairway.*} properties, checked at startup, and the registry of
 * running balancers. {@code fairway.enabled=false} turns the whole starter off.
 */
@AutoConfiguration
@ConditionalOnProperty(prefix = "fairway", name = "enabled", matchIfMissing = true)
@EnableConfigurationProperties(FairwayProperties.class)
public class FairwayAutoConfiguration {

  /** Every service's settings, validated now: a bad value stops startup naming the property. */
  @Bean
  FairwaySettings fairwaySettings(FairwayProperties properties, Environment environment) {
    return new FairwaySettings(properties, environment.getProperty("spring.cloud.loadbalancer.zone", ""),
        environment::getProperty);
  }

  @Bean
  FairwayBalancers fairwayBalancers() {
    return new FairwayBalancers();
  }
}
