package dev.fairway.lb.spring;

import io.micrometer.core.instrument.MeterRegistry;
import okhttp3.OkHttpClient;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.annotation.Bean;

/**
 * The OkHttp path, opt-in with {@code fairway.okhttp.enabled=true} (and lb-okhttp, OkHttp and Spring
 * Cloud Commons on the classpath): a {@link FairwayOkHttp} and, unless the application has its own,
 * an {@link OkHttpClient} bean carrying its interceptors. Runs after the application's
 * {@code DiscoveryClient} is configured.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class, afterName = {"dev.fairway.lb.spring.FairwayConsulAutoConfiguration",
    "org.springframework.cloud.client.discovery.composite.CompositeDiscoveryClientAutoConfiguration",
    "org.springframework.cloud.client.discovery.simple.SimpleDiscoveryClientAutoConfiguration"})
@ConditionalOnClass(name = {"okhttp3.OkHttpClient", "dev.fairway.lb.okhttp.LoadBalancingInterceptor",
    "org.springframework.cloud.client.discovery.DiscoveryClient"})
@ConditionalOnBean({FairwaySettings.class, DiscoveryClient.class})
@ConditionalOnProperty(prefix = "fairway.okhttp", name = "enabled", havingValue = "true")
public class FairwayOkHttpAutoConfiguration {

  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  FairwayOkHttp fairwayOkHttp(FairwaySettings settings, DiscoveryClient discovery, FairwayBalancers balancers,
      ObjectProvider<MeterRegistry> meters, FairwayProperties properties, ObjectProvider<TargetFeed> feed) {
    return new FairwayOkHttp(settings, discovery, feed.getIfAvailable(), balancers, meters.getIfUnique(),
        properties.getOkhttp().getRefreshInterval());
  }

  /** Shut down by {@link FairwayOkHttp#close()}, which owns it. */
  @Bean(destroyMethod = "")
  @ConditionalOnMissingBean
  OkHttpClient fairwayOkHttpClient(FairwayOkHttp okHttp) {
    return okHttp.client();
  }
}
