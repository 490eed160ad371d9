// @ts-check
// Docusaurus configuration for the Midnight developer documentation site.

/** @type {import('@docusaurus/types').Config} */
const config = {
  title: 'Midnight Docs',
  tagline: 'Build data-protecting applications with zero-knowledge proofs',
  url: 'https://docs.midnight.example',
  baseUrl: '/',
  organizationName: 'midnightntwrk',
  projectName: 'midnight-docs',
  onBrokenLinks: 'throw',
  onBrokenMarkdownLinks: 'warn',

  presets: [
    [
      'classic',
      /** @type {import('@docusaurus/preset-classic').Options} */
      ({
        docs: {
          routeBasePath: '/',
          sidebarPath: require.resolve('./sidebars.js'),
          editUrl: 'https://github.com/midnightntwrk/midnight-docs/edit/main/',
          lastVersion: 'current',
          versions: {
            current: { label: 'v1' },
            '0.1.0': { label: 'v0 (Legacy)', banner: 'unmaintained' },
          },
        },
        blog: {
          showReadingTime: true,
          blogTitle: 'Midnight engineering blog',
        },
        theme: {
          customCss: require.resolve('./src/css/custom.css'),
        },
      }),
    ],
  ],

  themeConfig: {
    navbar: {
      title: 'Midnight',
      items: [
        { type: 'docsVersionDropdown', position: 'right' },
        { to: '/blog', label: 'Blog', position: 'left' },
      ],
    },
    prism: {
      additionalLanguages: ['rust', 'toml', 'bash'],
    },
  },
};

module.exports = config;
