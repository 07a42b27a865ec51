package dev.fairway.lb.spring;

import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;
import java.util.LinkedHashMap;
import java.util.Map;
import org.springframework.core.env.Environment;
import org.springframework.util.ClassUtils;

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
    FairwaySettings settings = new FairwaySettings(properties, environment.getProperty("spring.cloud.loadbalancer.zone", ""),
        environment::getProperty);
    TargetFeed.requireSingle(environment);
    if (!environment.getProperty("fairway.consul.enabled", Boolean.class, false)
        || !ClassUtils.isPresent("dev.fairway.lb.consul.ConsulDiscovery", getClass().getClassLoader())) {
      requireNoSubset(properties); // only Fairway's Consul watcher places this application among its peers
    }
    return settings;
  }

  private static void requireNoSubset(FairwayProperties properties) {
    Map<String, FairwayProperties.Service> all = new LinkedHashMap<>();
    all.put("fairway.default", properties.getDefault());
    properties.getServices().forEach((id, s) -> all.put("fairway.services." + id, s));
    all.forEach((prefix, s) -> {
      Integer size = s.getSubset().getSize();
      if (size != null) {
        String property = prefix + ".subset.size";
        throw new FairwayConfigurationException(property, property + ": " + size + " (expected: with"
            + " fairway.consul.enabled=true and lb-discovery-consul, which place this application among its peers)");
      }
    });
  }

  @Bean
  FairwayBalancers fairwayBalancers() {
    return new FairwayBalancers();
  }
}
