package dev.fairway.lb.spring;

import io.micrometer.core.instrument.MeterRegistry;
import org.springframework.beans.factory.ObjectProvider;
import org.springframework.beans.factory.config.BeanPostProcessor;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.boot.autoconfigure.condition.ConditionalOnMissingBean;
import org.springframework.boot.autoconfigure.condition.ConditionalOnProperty;
import org.springframework.boot.http.client.ClientHttpRequestFactoryBuilder;
import org.springframework.boot.http.client.HttpComponentsClientHttpRequestFactoryBuilder;
import org.springframework.cloud.client.discovery.DiscoveryClient;
import org.springframework.context.annotation.Bean;

/**
 * The Apache HttpClient 5 path, opt-in with {@code fairway.httpclient5.enabled=true} (and
 * httpclient5, lb-apache-httpclient5, Spring Cloud Commons and Boot's {@code
 * ClientHttpRequestFactoryBuilder} on the classpath: on Boot 4 that is the {@code
 * spring-boot-http-client} module, which {@code spring-boot-restclient} brings): a {@link
 * FairwayHttpClient5Path}, and Fairway's exec chain element in every Apache HttpClient 5 {@link
 * ClientHttpRequestFactoryBuilder} bean of the application, the one Boot auto-configures and any of
 * the application's own. Boot builds the request factory of the {@code RestClient.Builder} and
 * {@code RestTemplateBuilder} it provides with that bean, so their calls to {@code
 * http://<service>/...} are balanced.
 *
 * <p>The element is added to Boot's builder (not a builder of Fairway's in its place), so Boot's
 * {@code spring.http.client.*} settings and the application's builder customizers keep applying. A
 * {@code ClientHttpRequestFactoryBuilder} bean for another client (say the JDK's, chosen with
 * Boot's factory property) stops startup naming {@code fairway.httpclient5.enabled}: the two ask
 * for different things.
 */
@AutoConfiguration(after = FairwayAutoConfiguration.class)
@ConditionalOnClass(name = {"org.apache.hc.client5.http.impl.classic.HttpClientBuilder", "dev.fairway.lb.hc5.FairwayHttpClient5",
    "org.springframework.cloud.client.discovery.DiscoveryClient",
    "org.springframework.boot.http.client.HttpComponentsClientHttpRequestFactoryBuilder",
    "org.springframework.http.client.HttpComponentsClientHttpRequestFactory"})
@ConditionalOnBean(FairwaySettings.class)
@ConditionalOnProperty(prefix = "fairway.httpclient5", name = "enabled", havingValue = "true")
public class FairwayHttpClient5AutoConfiguration {

  /**
   * The path. The {@code DiscoveryClient} and the feed are looked up when the bean is made, not by a
   * condition, so this configuration needs no place after every discovery's own.
   */
  @Bean(destroyMethod = "close")
  @ConditionalOnMissingBean
  FairwayHttpClient5Path fairwayHttpClient5Path(FairwaySettings settings, ObjectProvider<DiscoveryClient> discovery,
      FairwayBalancers balancers, ObjectProvider<MeterRegistry> meters, FairwayProperties properties,
      ObjectProvider<TargetFeed> feed) {
    return new FairwayHttpClient5Path(settings, discovery.getIfAvailable(), feed.getIfAvailable(), balancers,
        meters.getIfUnique(), properties.getHttpclient5().getRefreshInterval());
  }

  /** Adds Fairway to every HttpClient 5 {@link ClientHttpRequestFactoryBuilder} bean as it is made. */
  @Bean
  static BeanPostProcessor fairwayHttpClient5RequestFactories(ObjectProvider<FairwayHttpClient5Path> path) {
    return new BeanPostProcessor() {
      @Override
      public Object postProcessAfterInitialization(Object bean, String beanName) {
        if (bean instanceof HttpComponentsClientHttpRequestFactoryBuilder hc5) {
          FairwayHttpClient5Path p = path.getObject();
          return hc5.withHttpClientCustomizer(p::configure);
        }
        if (bean instanceof ClientHttpRequestFactoryBuilder<?>) {
          String property = HttpClient5Settings.ENABLED;
          throw new FairwayConfigurationException(property, property + ": true, but the ClientHttpRequestFactoryBuilder"
              + " bean \"" + beanName + "\" is a " + bean.getClass().getSimpleName() + " (expected: Apache HttpClient"
              + " 5's, which Boot picks when httpclient5 is on the classpath and no other client is asked for)");
        }
        return bean;
      }
    };
  }
}
