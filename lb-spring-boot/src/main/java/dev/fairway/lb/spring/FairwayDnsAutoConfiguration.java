package dev.fairway.lb.spring;

import dev.fairway.lb.dns.DnsTargetSource;
import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.context.properties.EnableConfigurationProperties;
import org.springframework.context.annotation.Bean;

/**
 * DNS behind every balancer, with {@code fairway.dns.enabled=true} and lb-discovery-dns on the
 * classpath (it is an optional dependency of the starter): the feed that makes one
 * {@link DnsTargetSource} per balancer from {@code fairway.dns.services.<id>} (SRV, or A/AAAA with a
 * port), refreshed as the records' TTLs say, on the Spring Cloud LoadBalancer path and the OkHttp path.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass(name = "dev.fairway.lb.dns.DnsTargetSource")
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.dns", name = "enabled", havingValue = "true")
@EnableConfigurationProperties(FairwayDnsProperties.class)
public class FairwayDnsAutoConfiguration {

  @Bean
  @ConditionalOnMissingBean(TargetFeed.class)
  DnsTargetFeed fairwayDnsTargetFeed(FairwayDnsProperties properties,
      ObjectProvider<MeterRegistry> meters) {
    return new DnsTargetFeed(properties, meters.getIfUnique());
  }
}
