package dev.fairway.lb.spring;

import dev.fairway.lb.kubernetes.KubernetesTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import java.time.Duration;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * Kubernetes EndpointSlices behind every balancer, with {@code fairway.kubernetes.enabled=true} and
 * lb-discovery-kubernetes on the classpath (it is an optional dependency of the starter): the feed that
 * makes one {@link KubernetesTargetSource} per balancer, from {@link FairwayKubernetesProperties}. The
 * Spring Cloud LoadBalancer path and the OkHttp path then follow the slices' ready and terminating
 * endpoints and their zones as the watch reports them, not when a discovery cache expires.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass(name = "dev.fairway.lb.kubernetes.KubernetesTargetSource")
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.kubernetes", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(FairwayKubernetesProperties.class)
public class FairwayKubernetesAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(TargetFeed.class)
  KubernetesTargetFeed fairwayKubernetesTargetFeed(FairwayKubernetesProperties properties,
      ObjectProvider<MeterRegistry> meters) {
    // Every value through the module's own checks now, on a builder that is never built.
    KubernetesTargetFeed.configure(KubernetesTargetSource.builder("fairway"), properties);
    Duration first = properties.getFirstReplyTimeout();
    if (first == null || first.isNegative() || first.toMinutes() > 10) {
      String property = KubernetesTargetFeed.PREFIX + "first-reply-timeout";
      throw new FairwayConfigurationException(property, property + ": " + first + " (expected: 0s..10m)");
    }
    return new KubernetesTargetFeed(properties, meters.getIfUnique());
  }
}
