export { fetchData } from './api';
